"""BM25 over tool documents (bm25s), rebuilt whenever the document set changes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._deps import require

__all__ = ["LexicalIndex"]


class LexicalIndex:
    """A BM25 index (Lucene variant, English stopwords) over a fixed list of documents.

    Args:
        documents: The documents, row-aligned with the dense index.
    """

    def __init__(self, documents: Sequence[str]) -> None:
        self._bm25s = require("bm25s")
        self.size = len(documents)
        self._retriever = self._bm25s.BM25()
        if documents:
            tokens = self._bm25s.tokenize(list(documents), stopwords="en", show_progress=False)
            self._retriever.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zeros when no query term is indexed)."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        tokens = self._bm25s.tokenize(query, stopwords="en", show_progress=False, return_ids=False)[
            0
        ]
        tokens = [token for token in tokens if token]
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores(tokens), dtype=np.float32)

"""A dependency-free BM25 tool search: the default behind ``search_tools``.

Each tool is indexed by its :func:`~paraagent_runtime.documents.tool_document` (the text the
retrieval extra embeds and BM25-indexes too), with the provider and tool name counted once more,
so a query word that names the tool outranks one that only appears in prose. Identifiers are
split by :func:`~paraagent_runtime.documents.split_identifier` (``snake_case``, ``kebab-case``,
``camelCase``), so ``getFlightStatus`` matches the query "flight status". Rebuilding the index is
linear in the catalog's text, which is fine for a few thousand tools; large catalogs use the
FAISS/BM25 hybrid of the ``retrieval`` extra.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import math
import re
from collections import Counter
from collections.abc import Sequence

from .documents import provider_of, split_identifier, tool_document
from .tools import ToolSpec

__all__ = ["KeywordToolSearch", "tokenize"]

_WORD = re.compile(r"[^\W_]+")
"""Letters and digits of any script: a non-English description is searchable as written."""
_STOP_WORDS = frozenset(
    "a an and are as at be by for from in into is it of on or the this that to with".split()
)


def _stem(token: str) -> str:
    # Plural folding only: enough to match "flights" with "flight" without a stemmer dependency.
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


@functools.lru_cache(maxsize=1 << 16)
def _word_tokens(word: str) -> tuple[str, ...]:
    # Catalog text repeats the same words endlessly: caching per word makes indexing ~3x faster.
    lowered = (part.lower() for part in split_identifier(word))
    return tuple(_stem(token) for token in lowered if token not in _STOP_WORDS)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lower-case search tokens (identifier-aware, stop words dropped).

    Example:
        >>> tokenize("getFlightStatus for flight_numbers")
        ['get', 'flight', 'status', 'flight', 'number']
        >>> tokenize("HTTPServer v2Api")
        ['httpserver', 'v2', 'api']
    """
    return [token for word in _WORD.findall(text) for token in _word_tokens(word)]


def _document(spec: ToolSpec) -> list[str]:
    name_tokens = tokenize(provider_of(spec)) + tokenize(spec.tool)
    return tokenize(tool_document(spec)) + name_tokens


class KeywordToolSearch:
    """Okapi BM25 over tool documents; implements :class:`~paraagent_runtime.search.ToolSearch`.

    Args:
        k1: term-frequency saturation.
        b: document-length normalization.
    """

    def __init__(self, *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._ids: list[str] = []
        self._lengths: list[int] = []
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._idf: dict[str, float] = {}
        self._average_length = 0.0
        self._update_lock = asyncio.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    async def update(self, tools: Sequence[ToolSpec]) -> None:
        """Index exactly ``tools``, replacing what was indexed before (built off the event loop).

        Concurrent updates run one at a time in call order (as the retrieval index's do), so the
        last one called wins and each returns only once its own tools are searchable.
        """
        async with self._update_lock:
            index = await asyncio.to_thread(self._build, list(tools))
            self._ids, self._lengths, self._postings, self._idf, self._average_length = index

    @staticmethod
    def _build(
        tools: list[ToolSpec],
    ) -> tuple[list[str], list[int], dict[str, list[tuple[int, int]]], dict[str, float], float]:
        ids: list[str] = []
        lengths: list[int] = []
        postings: dict[str, list[tuple[int, int]]] = {}
        for index, spec in enumerate(tools):
            document = _document(spec)
            ids.append(spec.id)
            lengths.append(len(document))
            for token, count in Counter(document).items():
                postings.setdefault(token, []).append((index, count))
        total = len(ids)
        idf = {
            token: math.log(1.0 + (total - len(docs) + 0.5) / (len(docs) + 0.5))
            for token, docs in postings.items()
        }
        return ids, lengths, postings, idf, (sum(lengths) / total) if total else 0.0

    async def search(self, query: str, *, top_k: int = 5) -> list[tuple[str, float]]:
        """Return up to ``top_k`` ``(tool_id, score)`` pairs, best first (ties by id)."""
        if top_k <= 0 or not self._ids:
            return []
        scores: dict[int, float] = {}
        average = self._average_length or 1.0
        for token in set(tokenize(query)):
            idf = self._idf.get(token)
            if idf is None:
                continue
            for index, count in self._postings[token]:
                norm = self.k1 * (1.0 - self.b + self.b * self._lengths[index] / average)
                scores[index] = scores.get(index, 0.0) + idf * count * (self.k1 + 1.0) / (
                    count + norm
                )
        best = heapq.nsmallest(
            top_k, scores.items(), key=lambda item: (-item[1], self._ids[item[0]])
        )
        return [(self._ids[index], score) for index, score in best]

"""The optional re-ranking hook: a second pass over the hybrid candidates (e.g. a cross-encoder)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import ConfigError
from ._deps import require

__all__ = ["CrossEncoderReranker", "Reranker"]


@runtime_checkable
class Reranker(Protocol):
    """Scores ``(query, document)`` pairs; higher is more relevant. Called off the event loop."""

    def __call__(self, query: str, documents: Sequence[str]) -> Sequence[float]:
        """Return one relevance score per document, aligned with ``documents``."""
        ...


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` loaded from a local directory.

    Args:
        model: Local cross-encoder directory (never downloaded).
        batch_size: Pairs per forward pass.

    Raises:
        ConfigError: ``model`` is not an existing directory.
        UserError: The ``retrieval`` extra is missing.
    """

    def __init__(self, model: str | Path, *, batch_size: int = 32) -> None:
        path = Path(model).expanduser()
        if not path.is_dir():
            raise ConfigError(f"cross-encoder {str(model)!r} is not a local model directory")
        sentence_transformers = require("sentence_transformers")
        self._model = sentence_transformers.CrossEncoder(str(path), local_files_only=True)
        self.batch_size = batch_size

    def __call__(self, query: str, documents: Sequence[str]) -> list[float]:
        """Score each ``(query, document)`` pair with the cross-encoder."""
        if not documents:
            return []
        pairs = [(query, document) for document in documents]
        scores = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return [float(score) for score in scores]

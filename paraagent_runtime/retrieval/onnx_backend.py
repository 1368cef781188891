"""Running a sentence encoder's transformer with ONNX Runtime: faster single queries on CPU.

A ``search_tools`` call embeds one short query, and at that size PyTorch's per-operator overhead
is a large part of the time. ONNX Runtime runs the same graph with fused kernels. The transformer
of a local sentence-transformers model is exported once with ``torch.onnx`` (offline, from the
loaded weights, after any bundled LoRA adapter is merged into them) into the paraagent cache,
keyed by a hash of the files of the model directory and of the adapter, and the torch version;
pooling and normalization are done here in NumPy, so the vectors match the PyTorch ones (to
~1e-7 in cosine) and an index built by either serves queries from the other.

Queries can run on a second graph with int8 weights (dynamic quantization of the MatMuls, one
scale per output channel, made once from the export and cached beside it): about 1.6x faster
on two cores, within 0.99 cosine of the float32 vectors on average, and no change in NDCG@5 on
the retrieval dev queries (``docs/results/retrieval_v2.md``). Documents always use the float32
graph, so stored indexes do not depend on the query precision.

sentence-transformers' own ``backend="onnx"`` needs ``optimum``, whose current release requires
transformers 4; this module needs only ``onnx`` (the exporter's dependency) and
``onnxruntime``, both in the ``retrieval`` extra.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import os
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ConfigError
from .config import QueryPrecision, check_query_precision

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

__all__ = [
    "PADDING_SLACK",
    "OnnxTransformer",
    "length_groups",
    "onnx_available",
]

logger = logging.getLogger(__name__)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_POOLING = ("mean", "cls")
PADDING_SLACK = 1.3
"""Most padded tokens per real token in one ORT run (:func:`length_groups`)."""


def onnx_available() -> bool:
    """Whether ``onnx`` and ``onnxruntime`` can be imported."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


class OnnxTransformer:
    """The transformer, pooling and normalization of a sentence-transformers model, run by ORT.

    Args:
        model: The loaded sentence-transformers model (its tokenizer and weights are used).
        model_dirs: The directories its weights came from (the model's, then any merged
            adapter's), hashed into the export's cache key.
        cache_dir: Where exports are kept.
        threads: ORT intra-op threads (default: torch's thread count).
        query_precision: ``int8`` runs :meth:`encode` with ``query=True`` on the quantized
            graph (made on first use); ``float32`` uses the exported graph for everything.

    Raises:
        ConfigError: The model is not a plain transformer + mean/CLS pooling (+ normalize)
            pipeline, or the export failed.
    """

    def __init__(
        self,
        model: SentenceTransformer,
        model_dirs: Sequence[Path],
        cache_dir: Path,
        *,
        threads: int | None = None,
        query_precision: QueryPrecision = "float32",
    ) -> None:
        import onnxruntime
        import torch

        self.query_precision = check_query_precision(query_precision)
        modules = list(model)
        names = [type(module).__name__ for module in modules]
        if names[:2] != ["Transformer", "Pooling"] or names[2:] not in ([], ["Normalize"]):
            raise ConfigError(
                f"the ONNX backend supports Transformer + Pooling models, got {names}"
            )
        self.pooling = str(getattr(modules[1], "pooling_mode", ""))
        if self.pooling not in _POOLING:
            raise ConfigError(
                f"the ONNX backend supports mean or cls pooling, not {self.pooling!r}"
            )
        self.normalize = len(modules) == 3
        self.tokenizer = model.tokenizer
        self.max_length = int(model.max_seq_length or 512)
        path = cache_dir / f"{_export_key(model_dirs)}.onnx"
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        options.log_severity_level = 3
        # Worker threads spin while a run is going (fast) but not after it: otherwise they keep
        # spinning into the FAISS and BM25 work that follows a query's embedding and, on two
        # cores, made a coverage search's FAISS part 2-4x slower (docs/results/retrieval_v2.md).
        options.add_session_config_entry("session.force_spinning_stop", "1")
        self._options = options
        export = modules[0].auto_model
        self.path = path
        self._session = self._open(path, lambda: _export(export, self.tokenizer, path))
        self._inputs = [item.name for item in self._session.get_inputs()]
        self._query_session: Any = None
        self._query_lock = threading.Lock()

    def _open(self, path: Path, make: Callable[[], None]) -> Any:
        """An ORT session of ``path``, made by ``make`` when missing or unreadable."""
        import onnxruntime

        def open_session() -> Any:
            return onnxruntime.InferenceSession(
                str(path), self._options, providers=["CPUExecutionProvider"]
            )

        if not path.is_file():
            make()
        try:
            return open_session()
        except Exception as exc:  # ORT raises its own Fail/InvalidProtobuf types
            logger.warning("the cached ONNX graph %s is unreadable (%s); redoing it", path, exc)
            make()
            return open_session()

    @property
    def query_path(self) -> Path:
        """Where the graph that embeds queries is cached."""
        if self.query_precision == "float32":
            return self.path
        return self.path.with_name(f"{self.path.stem}-{self.query_precision}.onnx")

    def _query_graph(self) -> Any:
        """The session that embeds queries (the int8 one is quantized and opened on first use)."""
        if self.query_precision == "float32":
            return self._session
        with self._query_lock:
            if self._query_session is None:
                target = self.query_path
                self._query_session = self._open(target, lambda: _quantize(self.path, target))
            return self._query_session

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """Embed texts into float32 rows (unit length when the model normalizes), input order.

        ``query`` selects the query graph (see ``query_precision``). Texts are tokenized once
        and run in groups of similar token count (:func:`length_groups`): a coverage search
        embeds a long request with its short needs, and padding the needs to the request's
        length would cost more than a second run.
        """
        encoded = self.tokenizer(texts, truncation=True, max_length=self.max_length)
        ids = encoded["input_ids"]
        types = encoded.get("token_type_ids")
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        session = self._query_graph() if query else self._session
        out: np.ndarray | None = None
        for group in length_groups([len(ids[i]) for i in order]):
            rows = order[group]
            batch_types = [types[i] for i in rows] if types else None
            vectors = self._run(session, [ids[i] for i in rows], batch_types)
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        assert out is not None
        return out

    def _run(self, session: Any, ids: list[list[int]], types: list[list[int]] | None) -> np.ndarray:
        """One ORT run of ``session`` over a batch of token-id rows, padded to the longest."""
        width = max(len(row) for row in ids)
        pad = self.tokenizer.pad_token_id or 0
        input_ids = np.full((len(ids), width), pad, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        token_types = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
            if types is not None:
                token_types[row, : len(tokens)] = types[row]
        given = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types}
        hidden = session.run(None, {name: given[name] for name in self._inputs})[0]
        if self.pooling == "cls":
            vectors = hidden[:, 0]
        else:
            weights = mask[..., None].astype(np.float32)
            vectors = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if self.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(vectors, dtype=np.float32)


def length_groups(lengths: Sequence[int], *, slack: float = PADDING_SLACK) -> list[slice]:
    """Cut ascending token ``lengths`` into runs whose padded size stays within ``slack``.

    A run grows while ``longest * count <= slack * total tokens``; one more ORT run costs far
    less than computing a batch of short texts at a long one's length.

    Args:
        lengths: Token counts, ascending.
        slack: Allowed ratio of padded to real tokens per run (>= 1).

    Returns:
        Consecutive slices covering ``lengths``.
    """
    groups: list[slice] = []
    start, total = 0, 0
    for end, length in enumerate(lengths):
        if end > start and length * (end - start + 1) > slack * (total + length):
            groups.append(slice(start, end))
            start, total = end, 0
        total += length
    if lengths:
        groups.append(slice(start, len(lengths)))
    return groups


def _export_key(model_dirs: Sequence[Path]) -> str:
    """A hash of the files of ``model_dirs`` and torch's version, named after the first dir.

    Of each file: its name and size, and its contents (small files) or its first and last
    megabyte (weights: hashing all of them costs seconds on every start). Contents rather than
    modification times, so every checkout of the same weights shares one export.
    """
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for model_dir in model_dirs:
        for file in sorted(p for p in model_dir.rglob("*") if p.is_file()):
            size = file.stat().st_size
            digest.update(f"{file.relative_to(model_dir)}:{size}".encode())
            with file.open("rb") as handle:
                if size <= 2 * _HASHED_EDGE:
                    digest.update(handle.read())
                    continue
                digest.update(handle.read(_HASHED_EDGE))
                handle.seek(-_HASHED_EDGE, os.SEEK_END)
                digest.update(handle.read())
    return f"{model_dirs[0].name}-{digest.hexdigest()[:16]}"


_HASHED_EDGE = 1 << 20


@contextmanager
def _written(path: Path, what: str) -> Iterator[str]:
    """A scratch path beside ``path`` that replaces it when the block succeeds.

    Raises:
        ConfigError: The block failed (``what`` names the step); ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(handle)
    try:
        yield scratch
        os.replace(scratch, path)
    except Exception as exc:
        raise ConfigError(f"{what} failed: {exc}") from exc
    finally:
        Path(scratch).unlink(missing_ok=True)


def _export(transformer: torch.nn.Module, tokenizer: Any, path: Path) -> None:
    """Export ``transformer`` (token ids in, last hidden states out) to ``path`` atomically."""
    import torch

    # Only the inputs the model takes (MPNet, DistilBERT have no token types).
    accepted = inspect.signature(transformer.forward).parameters
    names = [name for name in _INPUTS if name in accepted]

    class _LastHidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    started = time.perf_counter()
    sample = tokenizer(["export sample", "a longer export sample text"], padding=True)
    inputs = tuple(
        torch.tensor(sample.get(name) or [[0] * len(sample["input_ids"][0])] * 2) for name in names
    )
    axes = {name: {0: "batch", 1: "tokens"} for name in (*names, "last_hidden_state")}
    with _written(path, "exporting the encoder to ONNX") as scratch, warnings.catch_warnings():
        # The tracer warns about Python branches on shapes; the graph is checked against
        # PyTorch on several lengths and paddings in the tests.
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(
                _LastHidden(transformer.eval()),
                inputs,
                scratch,
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
    logger.info("exported the encoder to %s in %.1f s", path, time.perf_counter() - started)


def _quantize(source: Path, path: Path) -> None:
    """Write ``source`` with int8 MatMul weights (one scale per output channel) to ``path``.

    Per-channel scales matter: one scale per tensor moved query vectors to 0.96 cosine of the
    float32 ones on average (0.88 at worst), per channel to 0.993 (0.98).
    """
    import onnxruntime.quantization as quantization
    from onnxruntime.quantization import QuantType, quantize_dynamic

    started = time.perf_counter()
    # ORT's quantizer advises pre-processing through the root logger (not needed here): drop
    # the root logger's records from its package, and nothing else, while it runs.
    quiet = _NotFrom(Path(quantization.__file__).parent)
    with _written(path, "quantizing the query encoder") as scratch:
        logging.root.addFilter(quiet)
        try:
            quantize_dynamic(
                source,
                scratch,
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
            )
        finally:
            logging.root.removeFilter(quiet)
    logger.info("quantized the query encoder to %s in %.1f s", path, time.perf_counter() - started)


class _NotFrom(logging.Filter):
    """Drops log records emitted by code under one folder."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.prefix = str(folder)

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record unless its source file is under the folder."""
        return not record.pathname.startswith(self.prefix)

"""Running a sentence encoder's transformer with ONNX Runtime: faster single queries on CPU.

A ``search_tools`` call embeds one short query, and at that size PyTorch's per-operator overhead
is a large part of the time. ONNX Runtime runs the same graph with fused kernels. The transformer
of a local sentence-transformers model is exported once with ``torch.onnx`` (offline, from the
loaded weights, after any bundled LoRA adapter is merged into them) into the paraagent cache,
keyed by a hash of the files of the model directory and of the adapter, and the torch version;
pooling and normalization are done here in NumPy, so the vectors match the PyTorch ones (to
~1e-7 in cosine) and an index built by either serves queries from the other.

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
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ConfigError

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

__all__ = ["OnnxTransformer", "onnx_available"]

logger = logging.getLogger(__name__)

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_POOLING = ("mean", "cls")


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
    ) -> None:
        import onnxruntime
        import torch

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

        def open_session() -> Any:
            return onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )

        if not path.is_file():
            _export(modules[0].auto_model, self.tokenizer, path)
        try:
            self._session = open_session()
        except Exception as exc:  # ORT raises its own Fail/InvalidProtobuf types
            logger.warning(
                "the cached ONNX export %s is unreadable (%s); exporting again", path, exc
            )
            _export(modules[0].auto_model, self.tokenizer, path)
            self._session = open_session()
        self._inputs = [item.name for item in self._session.get_inputs()]
        self.path = path

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed one batch of texts into float32 rows (unit length when the model normalizes)."""
        encoded = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="np"
        )
        feeds: dict[str, Any] = {}
        for name in self._inputs:
            values = encoded.get(name)
            if values is None:  # a tokenizer without token types
                values = np.zeros_like(encoded["input_ids"])
            feeds[name] = np.asarray(values, dtype=np.int64)
        hidden = self._session.run(None, feeds)[0]
        if self.pooling == "cls":
            vectors = hidden[:, 0]
        else:
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            vectors = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        if self.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _export_key(model_dirs: Sequence[Path]) -> str:
    """A hash of the files of ``model_dirs`` and torch's version, named after the first dir.

    Of the files: names, sizes, times, small ones' contents.
    """
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for model_dir in model_dirs:
        for file in sorted(p for p in model_dir.rglob("*") if p.is_file()):
            stat = file.stat()
            # Weights are identified by size and modification time (hashing them costs seconds).
            relative = file.relative_to(model_dir)
            digest.update(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}".encode())
            if stat.st_size < 1_000_000:
                digest.update(file.read_bytes())
    return f"{model_dirs[0].name}-{digest.hexdigest()[:16]}"


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
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(handle)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            # The tracer warns about Python branches on shapes; the graph is checked against
            # PyTorch on several lengths and paddings in the tests.
            warnings.simplefilter("ignore")
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
        os.replace(scratch, path)
    except Exception as exc:
        raise ConfigError(f"exporting the encoder to ONNX failed: {exc}") from exc
    finally:
        Path(scratch).unlink(missing_ok=True)
    logger.info("exported the encoder to %s in %.1f s", path, time.perf_counter() - started)

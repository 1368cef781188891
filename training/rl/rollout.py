"""Where rollouts are generated: the trained transformers model, ONNX Runtime GenAI, or vLLM.

Every engine is token-in-token-out: completions carry prompt ids, sampled ids and their log-probs,
so :func:`~training.algo.tokens.episode_rows` never re-tokenizes text.

- ``transformers``: the ``TransformersPolicy`` sharing the trained weights; a sync only drops
  its prefix cache (keys and values computed by the previous weights).
- ``onnx`` (CPU, LoRA): an ``OnnxGenAIPolicy`` on the base model's ONNX Runtime GenAI export
  (built once, cached); after each update the adapter's merged linear weights are written into a
  copy of that export (:mod:`paraagent_runtime.policy.ort_weights`, seconds instead of a rebuild)
  and the engine loads it. The loss's log-probs are still recomputed by the trained model, so
  training does not depend on the engine's numerics (its sampling log-probs agree to ~2e-5).
- ``vllm`` (colocate, one node): an in-process ``VLLMPolicy`` on the trainer's GPU with
  ``enable_lora``; after each update the adapter is saved and the engine switches to it.
- ``vllm_server`` (several nodes): a ``vllm serve --enable-lora`` endpoint reached through the
  OpenAI-compatible backend with ``logprobs`` and ``return_token_ids``; after each update the
  adapter is saved (on a filesystem the server sees) and loaded through vLLM's
  ``/load_lora_adapter`` endpoint (the server needs ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``);
  the previous one is unloaded.

vLLM and ONNX Runtime GenAI are imported lazily, only by their engines.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paraagent_runtime import ModelAPIError, Policy

if TYPE_CHECKING:
    from .config import RLConfig
    from .model import RLModel

__all__ = [
    "OnnxRollouts",
    "RolloutEngine",
    "SharedWeights",
    "VLLMColocated",
    "VLLMServer",
    "rollout_engine",
]

logger = logging.getLogger(__name__)

ADAPTERS_DIR = "rollout-adapters"
EXPORTS_DIR = "rollout-exports"


class RolloutEngine(Protocol):
    """Generates rollouts for the trainer and follows its weights."""

    policy: Policy

    async def sync(self, model: RLModel, step: int) -> None:
        """Make the next rollouts use ``model``'s current weights (called before each step)."""
        ...

    async def aclose(self) -> None:
        """Release the engine."""
        ...


class SharedWeights:
    """Rollouts from the trained model itself (CPU, or one GPU without vLLM).

    Args:
        model: The trained model; its policy generates.
    """

    def __init__(self, model: RLModel) -> None:
        self.policy: Policy = model.policy

    async def sync(self, model: RLModel, step: int) -> None:
        """Drop the prefix cache: the weights changed since its keys and values were computed."""
        model.policy.clear_prefix_cache()

    async def aclose(self) -> None:
        """Nothing to release (the trainer owns the model)."""


class OnnxRollouts:
    """Rollouts from ONNX Runtime GenAI on the CPU, its export's weights rewritten per update.

    Args:
        config: The run's configuration (``output_dir``, ``tasks_per_step``, ``group_size``).
        base_model: The base model directory (the adapter is trained on top of it).

    Raises:
        UserError: the ``local`` extra (onnxruntime-genai) is missing (when the first sync
            exports the base model).
    """

    def __init__(self, config: RLConfig, base_model: Path) -> None:
        from paraagent_runtime.policy import OnnxGenAIPolicy

        # One kept sequence per concurrent rollout, each holding the model's whole context (a
        # turn past max_length still generates, as with transformers; training truncates it).
        self._onnx = OnnxGenAIPolicy(
            base_model, model_name="rl-policy", slots=config.tasks_per_step * config.group_size
        )
        self.policy: Policy = self._onnx
        self._exports = config.output_dir / EXPORTS_DIR
        self._written: list[Path] = []
        self.last_sync_s = 0.0
        """Seconds the last :meth:`sync` took (merge, write, load)."""

    async def sync(self, model: RLModel, step: int) -> None:
        """Write the adapter's merged weights into a copy of the base export and load it."""
        from paraagent_runtime.policy.ort_weights import linear_weights, write_linear_weights

        started = time.perf_counter()
        base = await asyncio.to_thread(lambda: self._onnx.export_dir)
        weights = linear_weights(model.module)
        target = await asyncio.to_thread(
            write_linear_weights, base, weights, self._exports / f"step-{step}"
        )
        await asyncio.to_thread(self._onnx.use_export, target)
        self._written.append(target)
        while len(self._written) > 1:
            shutil.rmtree(self._written.pop(0), ignore_errors=True)
        self.last_sync_s = time.perf_counter() - started
        logger.info(
            "rollout weights for step %d written and loaded in %.1f s", step, self.last_sync_s
        )

    async def aclose(self) -> None:
        """Drop the engine and the written exports (the base export stays cached)."""
        await self._onnx.aclose()
        shutil.rmtree(self._exports, ignore_errors=True)


class _AdapterPublisher:
    """Saves the trained adapter per step under ``directory/step-<n>``, keeping the last two."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._published: list[Path] = []

    def publish(self, model: RLModel, step: int) -> Path:
        target = self.directory / f"step-{step}"
        shutil.rmtree(target, ignore_errors=True)
        model.save(target)
        self._published.append(target)
        while len(self._published) > 2:
            shutil.rmtree(self._published.pop(0), ignore_errors=True)
        return target


class VLLMColocated:
    """Rollouts from an in-process vLLM engine on the trainer's GPU (LoRA weights synced per step).

    Args:
        config: The run's configuration (``vllm_*`` fields, ``lora_r``, ``seed``).
        base_model: The base model directory the engine loads.

    Raises:
        UserError: vLLM is not installed.
    """

    def __init__(self, config: RLConfig, base_model: str) -> None:
        from paraagent_runtime.policy import VLLMPolicy

        extra: dict[str, str] = {}
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            # One engine per trainer process on that process's GPU, inside the launcher's group.
            extra["distributed_executor_backend"] = "external_launcher"
        self._vllm = VLLMPolicy(
            base_model,
            enable_lora=True,
            max_lora_rank=max(config.lora_r, 16),
            gpu_memory_utilization=config.vllm_gpu_memory_utilization,
            max_model_len=config.vllm_max_model_len,
            dtype=config.dtype if config.dtype != "float32" else "auto",
            seed=config.seed,
            **extra,
        )
        self.policy: Policy = self._vllm
        self._publisher = _AdapterPublisher(config.output_dir / ADAPTERS_DIR)

    async def sync(self, model: RLModel, step: int) -> None:
        """Save the adapter and switch the engine to it."""
        self._vllm.set_adapter(self._publisher.publish(model, step))

    async def aclose(self) -> None:
        """Drop the engine."""
        await self._vllm.aclose()


class VLLMServer:
    """Rollouts from a ``vllm serve --enable-lora`` endpoint (LoRA weights synced over HTTP).

    Args:
        config: The run's configuration (``vllm_server_*``, ``vllm_timeout_s``).
    """

    def __init__(self, config: RLConfig) -> None:
        from paraagent_runtime.policy import OpenAICompatiblePolicy

        assert config.vllm_server_url is not None and config.vllm_server_model is not None
        self._http = OpenAICompatiblePolicy(
            config.vllm_server_url,
            config.vllm_server_model,
            timeout_s=config.vllm_timeout_s,
            stream=False,
            logprobs=True,
            extra_body={"return_token_ids": True},
        )
        self.policy: Policy = self._http
        self._timeout_s = config.vllm_timeout_s
        self._publisher = _AdapterPublisher(config.output_dir / ADAPTERS_DIR)
        self._loaded: str | None = None

    async def _post(self, endpoint: str, body: dict[str, str]) -> None:
        import aiohttp

        url = f"{self._http.base_url}/{endpoint}"
        timeout = aiohttp.ClientTimeout(total=self._timeout_s)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(url, json=body) as response,
            ):
                if response.status >= 400:
                    text = await response.text(errors="replace")
                    raise ModelAPIError(
                        f"{url} returned HTTP {response.status}: {text[:300]} (start vllm serve "
                        "with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True)"
                    )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ModelAPIError(f"request to {url} failed: {type(exc).__name__}: {exc}") from exc

    async def sync(self, model: RLModel, step: int) -> None:
        """Save the adapter, load it on the server under a new name and send requests to it.

        Raises:
            ModelAPIError: the server refused to load the adapter.
        """
        path = self._publisher.publish(model, step)
        name = f"rl-step-{step}"
        await self._post("load_lora_adapter", {"lora_name": name, "lora_path": str(path.resolve())})
        previous, self._loaded = self._loaded, name
        self._http.model = name
        if previous is not None:
            try:
                await self._post("unload_lora_adapter", {"lora_name": previous})
            except ModelAPIError as exc:
                logger.warning("could not unload %s: %s", previous, exc)

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._http.aclose()


def rollout_engine(config: RLConfig) -> RolloutEngine | None:
    """The engine ``config.rollout_backend`` names (``None`` for ``transformers``).

    Built before the trained model is loaded, so a missing vLLM fails before any GPU work.

    Raises:
        UserError: the ``vllm`` backend without vLLM installed.
    """
    if config.rollout_backend in ("vllm", "onnx"):
        from paraagent_runtime.policy.smollm2 import ensure_smollm2

        base = config.model or str(ensure_smollm2())
        if config.rollout_backend == "onnx":
            return OnnxRollouts(config, Path(base))
        return VLLMColocated(config, base)
    if config.rollout_backend == "vllm_server":
        return VLLMServer(config)
    return None

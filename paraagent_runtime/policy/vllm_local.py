"""A policy running vLLM in-process (GPU). ``vllm`` is imported lazily, only when the engine starts.

For serving many agents at once prefer ``vllm serve`` plus
:class:`~paraagent_runtime.policy.openai_http.OpenAICompatiblePolicy`; this backend suits
single-process rollouts where token ids and log-probs come straight from the engine.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelAPIError, UserError
from ._callbacks import emit_text
from .base import Completion, Message, Policy, SamplingParams, TextCallback

__all__ = ["VLLMPolicy"]


def _require_vllm() -> None:
    if importlib.util.find_spec("vllm") is None:
        raise UserError(
            "VLLMPolicy needs vLLM, which is not installed: install the `vllm` extra "
            "(pip install 'paraagent[vllm]', GPU only)"
        )


class VLLMPolicy(Policy):
    """Generates turns with an in-process ``vllm.LLM`` engine.

    Args:
        model: a model directory or id (loaded by vLLM; keep ``HF_HUB_OFFLINE=1`` for local-only).
        **engine_kwargs: passed to ``vllm.LLM`` (``gpu_memory_utilization``, ``max_model_len``,
            ``enable_lora``…).

    Raises:
        UserError: vLLM is not installed (the check runs at construction, before any GPU work).
    """

    name = "vllm"

    def __init__(self, model: str, **engine_kwargs: Any) -> None:
        _require_vllm()
        self.model_name = model
        self._engine_kwargs = engine_kwargs
        self._engine: Any = None
        self._lock = asyncio.Lock()
        self._adapter: tuple[str, int] | None = None
        self._adapters_set = 0

    def set_adapter(self, path: str | Path | None) -> None:
        """Generate with the LoRA adapter at ``path`` from now on (``None``: the base weights).

        Needs ``enable_lora=True`` in the engine arguments. Every call registers the directory under
        a new adapter id, so a trainer can publish updated adapter weights between steps.
        """
        self._adapters_set += 1
        self._adapter = None if path is None else (str(path), self._adapters_set)

    def _engine_now(self) -> Any:
        if self._engine is None:
            from vllm import LLM

            self._engine = LLM(model=self.model_name, **self._engine_kwargs)
        return self._engine

    def _generate(
        self, messages: Sequence[Message], sampling: SamplingParams, tools: Any
    ) -> Completion:
        from vllm import SamplingParams as VLLMSamplingParams

        engine = self._engine_now()
        tokenizer = engine.get_tokenizer()
        prompt_ids = tokenizer.apply_chat_template(
            [message.model_dump(exclude_none=True) for message in messages],
            tools=list(tools) if tools else None,
            add_generation_prompt=True,
            tokenize=True,
        )
        params = VLLMSamplingParams(
            max_tokens=sampling.max_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            stop=list(sampling.stop) or None,
            seed=sampling.seed,
            logprobs=0,
        )
        lora_request = None
        if self._adapter is not None:
            from vllm.lora.request import LoRARequest

            path, adapter_id = self._adapter
            lora_request = LoRARequest(f"adapter-{adapter_id}", adapter_id, path)
        output = engine.generate(
            {"prompt_token_ids": list(prompt_ids)},
            params,
            use_tqdm=False,
            lora_request=lora_request,
        )[0]
        result = output.outputs[0]
        token_ids = list(result.token_ids)
        logprobs = [
            float(step[token].logprob)
            for step, token in zip(result.logprobs or [], token_ids, strict=False)
        ]
        return Completion(
            text=result.text,
            finish_reason=result.finish_reason,
            prompt_token_ids=list(prompt_ids),
            token_ids=token_ids,
            logprobs=logprobs or None,
            prompt_tokens=len(prompt_ids),
            completion_tokens=len(token_ids),
            model=self.model_name,
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: SamplingParams | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_text: TextCallback | None = None,
    ) -> Completion:
        """Generate the next turn in a worker thread; ``on_text`` gets the whole text at the end.

        Raises:
            ModelAPIError: the engine failed to start or to generate.
        """
        started = time.perf_counter()
        async with self._lock:
            try:
                completion = await asyncio.to_thread(
                    self._generate, messages, sampling or SamplingParams(), tools
                )
            except (RuntimeError, ValueError, OSError) as exc:
                raise ModelAPIError(
                    f"vLLM generation with {self.model_name} failed: {exc}"
                ) from exc
        await emit_text(on_text, completion.text)
        return completion.model_copy(update={"latency_s": time.perf_counter() - started})

    async def aclose(self) -> None:
        """Drop the engine (vLLM frees the GPU memory when it is garbage collected)."""
        self._engine = None

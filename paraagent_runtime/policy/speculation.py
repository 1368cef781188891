"""Draft tokens for speculative greedy decoding: lookup in the context and in recent outputs.

An agent's turn copies a lot: tool names and argument values from the prompt and the tool
results, the phrasing of its own earlier turns (a fine-tuned policy says "The task needs tools
for:" in every episode), the JSON punctuation its grammar forces. A :class:`PromptLookup` guesses
the next tokens by finding the longest suffix of the sequence (up to ``max_ngram`` tokens) that
occurred before, in the sequence itself or in the policy's recent outputs (:class:`DraftMemory`),
and proposing what followed it there (prompt-lookup decoding, extended to the model's own
history). The backend feeds the picked token and the guesses in one forward pass, which costs
little more than one token on a memory-bound CPU, and keeps the guesses its own greedy picks
confirm: the output equals plain greedy decoding's (up to float rounding between one-token and
several-token passes), only faster when guesses hit.

The draft length adapts like transformers' assisted generation: two longer after a fully
accepted draft, one shorter after a rejected one.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["DraftMemory", "DraftStats", "PromptLookup"]

logger = logging.getLogger(__name__)

_CONTEXT_KEPT = 8
"""Prompt tokens kept in front of each remembered output, so a turn's opening can be matched."""


@dataclass
class DraftStats:
    """How many tokens were drafted and how many of them the model's own picks confirmed."""

    passes: int = 0
    drafted: int = 0
    accepted: int = 0

    @property
    def acceptance(self) -> float:
        """The share of drafted tokens that were accepted (0 when nothing was drafted)."""
        return self.accepted / self.drafted if self.drafted else 0.0


class DraftMemory:
    """The policy's recent outputs (each after the last few tokens of its prompt), for lookup.

    A memory can be kept across processes (:meth:`save`, :meth:`load`): a model's later runs
    then draft from its earlier ones from the first turn on.

    Args:
        max_tokens: how many tokens are kept; the oldest outputs are dropped first.
    """

    def __init__(self, max_tokens: int = 32_768) -> None:
        self.max_tokens = max_tokens
        self._outputs: deque[np.ndarray] = deque()
        self._size = 0
        self._joined: np.ndarray | None = None
        self.changed = False

    def add(self, prompt: Sequence[int], output: Sequence[int]) -> None:
        """Remember ``output`` (with the end of its ``prompt`` in front)."""
        if not output or self.max_tokens <= 0:
            return
        self._append(np.asarray([*prompt[-_CONTEXT_KEPT:], *output], dtype=np.int64))
        self.changed = True

    def _append(self, entry: np.ndarray) -> None:
        self._outputs.append(entry)
        self._size += len(entry)
        while self._size > self.max_tokens and len(self._outputs) > 1:
            self._size -= len(self._outputs.popleft())
        self._joined = None

    def save(self, path: Path) -> None:
        """Write the memory to ``path`` (an ``.npz``; best effort: a failure is logged)."""
        lengths = np.asarray([len(entry) for entry in self._outputs], dtype=np.int64)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with partial.open("wb") as handle:
                np.savez_compressed(handle, tokens=self.tokens().astype(np.int32), lengths=lengths)
            partial.replace(path)
        except OSError as exc:
            logger.warning("draft memory not saved to %s: %s", path, exc)
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            return
        self.changed = False

    def load(self, path: Path) -> None:
        """Put the outputs saved at ``path`` before the remembered ones (missing: nothing).

        A file that cannot be read is logged and ignored: drafts only change speed.
        """
        if not path.is_file():
            return
        try:
            with np.load(path) as saved:
                tokens, lengths = saved["tokens"], saved["lengths"]
            if lengths.sum() != len(tokens) or (lengths < 0).any():
                raise ValueError("lengths do not add up to the tokens")
        except (OSError, ValueError, KeyError) as exc:
            logger.warning("draft memory at %s ignored: %s", path, exc)
            return
        current = list(self._outputs)
        self._outputs.clear()
        self._size = 0
        for entry in [*np.split(tokens.astype(np.int64), np.cumsum(lengths)[:-1]), *current]:
            if len(entry):
                self._append(entry)

    def tokens(self) -> np.ndarray:
        """Every remembered token, oldest first."""
        if self._joined is None:
            parts = list(self._outputs)
            self._joined = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return self._joined


@dataclass
class PromptLookup:
    """Proposes draft tokens for one generated turn (see the module docstring).

    Args:
        max_draft: the longest draft; 0 turns drafting off.
        max_ngram: the longest suffix matched.
        memory: recent outputs searched besides the sequence (``None``: the sequence alone).
        stats: where drafted and accepted tokens are counted (shared by a policy's turns).
    """

    max_draft: int = 8
    max_ngram: int = 16
    memory: DraftMemory | None = None
    stats: DraftStats = field(default_factory=DraftStats)
    _length: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._length = min(6, self.max_draft)

    def propose(self, sequence: Sequence[int], forced: Sequence[int] = ()) -> list[int]:
        """Draft tokens to follow ``sequence`` and then ``forced`` (tokens known to come next).

        ``forced`` (e.g. what a grammar allows as the only continuation) leads the draft; the
        lookup extends it from the sequence with ``forced`` appended.
        """
        if self.max_draft <= 0:
            return []
        draft = list(forced[: self._length])
        room = self._length - len(draft)
        if room > 0:
            tokens = np.asarray([*sequence, *draft], dtype=np.int64)
            draft += self._lookup(tokens, room)
        return draft

    def record(self, drafted: int, accepted: int) -> None:
        """Count one verified draft and adapt the next draft's length to how it went."""
        if drafted == 0:
            return
        self.stats.passes += 1
        self.stats.drafted += drafted
        self.stats.accepted += accepted
        if accepted == drafted:
            self._length = min(self.max_draft, self._length + 2)
        else:
            self._length = max(1, self._length - 1)

    def _lookup(self, tokens: np.ndarray, room: int) -> list[int]:
        """What followed the longest earlier match of the sequence's end (memory wins ties)."""
        suffix = tokens[-self.max_ngram :]
        sources = [tokens]
        if self.memory is not None:
            sources.insert(0, self.memory.tokens())
        best_length, best_source, best_follow = 0, tokens, 0
        for source in sources:
            length, follow = _longest_match(source, suffix)
            if length > best_length:
                best_length, best_source, best_follow = length, source, follow
        if best_length == 0:
            return []
        return best_source[best_follow : best_follow + room].tolist()


def _longest_match(source: np.ndarray, suffix: np.ndarray) -> tuple[int, int]:
    """The longest match of ``suffix``'s end in ``source`` and where its continuation starts.

    Only occurrences followed by at least one token count (for the sequence itself, that
    excludes the suffix); among equally long matches the latest wins.
    """
    ends = np.flatnonzero(source[:-1] == suffix[-1])
    if len(ends) == 0:
        return 0, 0
    length = np.ones(len(ends), dtype=np.int64)
    for back in range(1, len(suffix)):
        starts = ends - back
        extend = (length == back) & (starts >= 0)
        extend[extend] = source[starts[extend]] == suffix[-1 - back]
        if not extend.any():
            break
        length[extend] = back + 1
    best = len(length) - 1 - int(np.argmax(length[::-1]))
    return int(length[best]), int(ends[best]) + 1

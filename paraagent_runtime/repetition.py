"""The repetition guard's rule: when is a turn the same turn again?

An agent whose turn repeats the previous one — the same calls with the same arguments, getting
the same results — sees a context that changes only in length; a small model in that state
repeats to its turn limit. :class:`RepeatCounter` counts such turns in a row; the agent loop ends
the episode at :attr:`~paraagent_runtime.AgentConfig.max_repeated_turns`, and
``benchmarks/repetition_guard.py`` replays recorded episodes through the same rule.
"""

from __future__ import annotations

import json

from .tools import ToolCall, ToolResult

__all__ = ["RepeatCounter"]


class RepeatCounter:
    """Counts consecutive turns that made the same calls and got the same results.

    Calls compare by name and arguments, results by what the model saw (content or typed
    error), both as multisets: call ids and the order of parallel calls do not matter. A tool
    whose result changes (a job polled until it is done) never repeats.
    """

    def __init__(self) -> None:
        self.streak = 0
        self._last: list[tuple[str, str]] | None = None

    def add(self, calls: list[ToolCall], results: list[ToolResult]) -> int:
        """Count one turn that ran ``calls`` (``results`` in the same order); return the streak."""
        key = sorted(
            (call.dedup_key(), json.dumps(result.observation(), sort_keys=True, default=str))
            for call, result in zip(calls, results, strict=True)
        )
        self.streak = self.streak + 1 if key == self._last else 1
        self._last = key
        return self.streak

    def reset(self) -> None:
        """A turn without calls breaks the streak."""
        self.streak, self._last = 0, None

"""The timeline: the live turn status, then turns and phases of the task, and the critical path."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import Static

from paraagent_runtime import (
    AgentEvent,
    AnswerEvent,
    CallFinished,
    Episode,
    PhaseEvent,
    TextDelta,
    TurnFinished,
    TurnStarted,
)

from ..render import count_of, format_latency, timings_shown
from .calls import SPINNER

__all__ = ["Timeline"]

_PHASE_MARKS = {"explore": ("E", "magenta"), "execute": ("X", "cyan"), "act": ("A", "blue")}
_WORD_MARKS = {"answer": ("Answer", "bold green"), "format": ("✗format", "bold red")}
_STATES = {
    "cancelled": ("⊘ cancelled  ", "bold yellow"),
    "failed": ("✗ failed  ", "bold red"),
}


class Timeline(Static):
    """The lines under the conversation.

    While a task runs: a spinner, the turn, what it waits for (the model, or its calls) and for
    how many seconds, and the tokens the turn streamed so far. Always: each turn of the task as a
    phase mark with its call count, the number of calls, the critical path (the sum over turns
    of the slowest call) next to the sum of all call latencies (what running the calls one after
    the other would have cost). After a resume it describes the resumed conversation's last task.

    Attributes:
        tasks: tasks of the conversation (resumed ones included).
        session_calls: calls of the conversation (resumed ones included).
        tokens: text pieces streamed in the current turn (one per decoded token on streaming
            backends).
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.tasks = 0
        self.session_calls = 0
        self.resumed = 0
        self._timer: Any = None
        self._frame = 0
        self.reset()

    def reset(self) -> None:
        """Start counting a new task."""
        self.marks: list[tuple[str, int]] = []
        self.calls = 0
        self.critical_path_s = 0.0
        self.sequential_s = 0.0
        self.state = "idle"
        self.turn: int | None = None
        self.activity = ""
        self.tokens = 0
        self._since = time.monotonic()
        self._show()

    def forget_session(self) -> None:
        """A new conversation: nothing ran in it yet."""
        self.tasks = self.session_calls = self.resumed = 0
        self.reset()

    def start(self) -> None:
        """A task starts running: the live status ticks until :meth:`stop`."""
        self.reset()
        self.tasks += 1
        self.state = "running"
        self.activity = "starting"
        if self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)
        self._show()

    def _tick(self) -> None:
        self._frame += 1
        self._show()

    def _mark_turn(self, phase: str | None, calls: int, *, format_errors: bool) -> None:
        if calls:
            self.marks.append((phase or "act", calls))
        elif format_errors:
            self.marks.append(("format", 0))

    def apply(self, event: AgentEvent) -> None:
        """Count one agent event."""
        if isinstance(event, TurnStarted):
            self.turn, self.activity, self.tokens = event.turn, "thinking", 0
            self._since = time.monotonic()
        elif isinstance(event, TextDelta):
            self.tokens += 1
        elif isinstance(event, PhaseEvent):
            self._mark_turn(event.phase, len(event.calls), format_errors=bool(event.format_errors))
            calls = count_of(len(event.calls), "call")
            self.activity = f"running {calls}" if event.calls else "reading the turn"
            self._since = time.monotonic()
        elif isinstance(event, CallFinished):
            self.calls += 1
            self.session_calls += 1
            self.sequential_s += event.result.latency_s
        elif isinstance(event, TurnFinished):
            self.critical_path_s += event.tools_latency_s
        elif isinstance(event, AnswerEvent):
            self.marks.append(("answer", 0))
            self.activity = "answered"
        self._show()

    def stop(self, state: str) -> None:
        """The task ended (``done``, ``cancelled`` or ``failed``)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.state = state
        self._show()

    def resuming(self) -> None:
        """A saved conversation is being loaded (:meth:`replay` follows)."""
        self.forget_session()
        self.state = "resuming"
        self._show()

    def replay(self, episodes: Sequence[Episode]) -> None:
        """Describe a resumed conversation: its size, and its last task's turns and calls."""
        self.forget_session()
        self.resumed = self.tasks = len(episodes)
        for episode in episodes:
            self.session_calls += sum(len(record.results) for record in episode.turns)
        if episodes:
            for record in episodes[-1].turns:
                self._mark_turn(
                    record.phase, len(record.calls), format_errors=bool(record.format_errors)
                )
                if record.answer is not None:
                    self.marks.append(("answer", 0))
                self.calls += len(record.results)
                self.critical_path_s += record.tools_latency_s
                self.sequential_s += sum(result.latency_s for result in record.results)
            self.state = "resumed"
        self._show()

    def _status(self, shown: bool) -> Text:
        # Hidden timings make reproducible screenshots: the spinner stands still too.
        spinner = SPINNER[self._frame % len(SPINNER) if shown else 0]
        turn = f"turn {self.turn + 1} " if self.turn is not None else ""
        elapsed = f"{time.monotonic() - self._since:.1f} s" if shown else "—"
        text = Text.assemble((f"{spinner} ", "bold cyan"), (f"{turn}{self.activity}", "bold"))
        text.append(f" · {elapsed}")
        if self.tokens:
            text.append(f" · {count_of(self.tokens, 'token')} streamed")
        text.append(" · Esc cancels", style="dim")
        return text

    def _show(self) -> None:
        shown = not self.is_attached or timings_shown(self)
        if self.state == "idle" and not self.marks:
            self.update(Text("no task yet: ask something below", style="dim"))
            return
        if self.state == "resuming":
            self.update(Text("↺ loading the saved conversation…", style="bold"))
            return
        text = Text()
        if self.state == "running":
            text.append_text(self._status(shown))
            if not self.marks:
                self.update(text)
                return
            text.append("\n")
        elif self.state == "resumed":
            text.append(f"↺ resumed {count_of(self.resumed, 'task')} · last: ", style="bold")
        elif self.state in _STATES:
            text.append(*_STATES[self.state])
        for position, (phase, count) in enumerate(self.marks):
            if position:
                text.append(" ▸ ", style="dim")
            if phase in _WORD_MARKS:
                text.append(*_WORD_MARKS[phase])
                continue
            letter, style = _PHASE_MARKS.get(phase, ("?", "white"))
            text.append(f"{letter}×{count}", style=f"bold {style}")
        turns = sum(1 for phase, _ in self.marks if phase not in _WORD_MARKS)
        text.append(f"  {count_of(turns, 'tool turn')} · {count_of(self.calls, 'call')} · ")
        text.append(
            f"critical path {format_latency(self.critical_path_s, shown=shown)}", style="bold"
        )
        text.append(f" · calls total {format_latency(self.sequential_s, shown=shown)}", style="dim")
        self.update(text)

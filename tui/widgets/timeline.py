"""The timeline: turns and phases of the current task, calls, and the critical path."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from paraagent_runtime import AgentEvent, AnswerEvent, CallFinished, PhaseEvent, TurnFinished

from ..render import format_latency, timings_shown

__all__ = ["Timeline"]

_PHASE_MARKS = {"explore": ("E", "magenta"), "execute": ("X", "cyan"), "act": ("A", "blue")}
_STATES = {
    "running": ("● running (Esc cancels)  ", "bold cyan"),
    "cancelled": ("⊘ cancelled  ", "bold yellow"),
    "failed": ("✗ failed  ", "bold red"),
}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


class Timeline(Static):
    """One line under the conversation.

    Shows each turn of the current task as a phase mark with its call count, the number of
    calls, the critical path (the sum over turns of the slowest call) next to the sum of all call
    latencies (what running the calls one after the other would have cost).
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.tasks = 0
        self.session_calls = 0
        self.reset()

    def reset(self) -> None:
        """Start counting a new task."""
        self.marks: list[tuple[str, int]] = []
        self.calls = 0
        self.critical_path_s = 0.0
        self.sequential_s = 0.0
        self.state = "idle"
        self._show()

    def start(self) -> None:
        """A task starts running."""
        self.reset()
        self.tasks += 1
        self.state = "running"
        self._show()

    def apply(self, event: AgentEvent) -> None:
        """Count one agent event."""
        if isinstance(event, PhaseEvent) and event.calls:
            self.marks.append((event.phase or "act", len(event.calls)))
        elif isinstance(event, CallFinished):
            self.calls += 1
            self.session_calls += 1
            self.sequential_s += event.result.latency_s
        elif isinstance(event, TurnFinished):
            self.critical_path_s += event.tools_latency_s
        elif isinstance(event, AnswerEvent):
            self.marks.append(("answer", 0))
        self._show()

    def stop(self, state: str) -> None:
        """The task ended (``done``, ``cancelled`` or ``failed``)."""
        self.state = state
        self._show()

    def _show(self) -> None:
        if self.state == "idle" and not self.marks:
            self.update(Text("no task yet: ask something below", style="dim"))
            return
        text = Text()
        if self.state in _STATES:
            text.append(*_STATES[self.state])
        for position, (phase, count) in enumerate(self.marks):
            if position:
                text.append(" ▸ ", style="dim")
            if phase == "answer":
                text.append("Answer", style="bold green")
                continue
            letter, style = _PHASE_MARKS.get(phase, ("?", "white"))
            text.append(f"{letter}×{count}", style=f"bold {style}")
        turns = sum(1 for phase, _ in self.marks if phase != "answer")
        shown = not self.is_attached or timings_shown(self)
        text.append(f"  {_count(turns, 'tool turn')} · {_count(self.calls, 'call')} · ")
        text.append(
            f"critical path {format_latency(self.critical_path_s, shown=shown)}", style="bold"
        )
        text.append(f" · calls total {format_latency(self.sequential_s, shown=shown)}", style="dim")
        self.update(text)

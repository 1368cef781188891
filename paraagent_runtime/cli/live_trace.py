"""``paraagent run``'s live trace: each turn's phase, calls, failures, and a live turn status.

Every line is printed in the turn it belongs to: the phase and its calls, the turn's format errors
(malformed tool-call JSON, an unknown phase), each failed call with its typed error, and a fatal
error with its cause, each turn opened by the model's time and tokens. On a terminal a status line
below them shows the turn in progress (spinner, elapsed time, tokens streamed, calls running);
when the output is redirected that line is off and a ``thinking…`` line opens each turn instead.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from ..events import (
    AgentEvent,
    CallFinished,
    CallStarted,
    EpisodeFinished,
    ErrorEvent,
    PhaseEvent,
    TextDelta,
    TurnFinished,
    TurnStarted,
)

__all__ = ["LiveTrace", "TurnStatus"]

_ERROR_CHARS = 160


def _short(text: str, limit: int = _ERROR_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class TurnStatus:
    """The turn in progress as one line: what it does, elapsed time, tokens, calls in flight.

    Rendered anew on every refresh of the status, so the elapsed time runs on between events.
    Each streamed text piece counts as one token (the local backends stream token by token).
    """

    def __init__(self) -> None:
        self.turn = 0
        self.started = time.monotonic()
        self.tokens = 0
        self.running = 0

    def start_turn(self, turn: int) -> None:
        """A new turn: the model is asked."""
        self.turn, self.started, self.tokens, self.running = turn, time.monotonic(), 0, 0

    def describe(self) -> str:
        """``turn 2 · thinking · 3.4 s · 41 tokens`` (or ``running 3 calls``)."""
        doing = (
            f"running {self.running} call{'s' * (self.running != 1)}"
            if self.running
            else ("thinking")
        )
        elapsed = time.monotonic() - self.started
        return f"turn {self.turn} · {doing} · {elapsed:.1f} s · {self.tokens} tokens"

    def __rich__(self) -> RenderableType:
        return Text(self.describe(), style="dim")


class LiveTrace:
    """The event callback of one ``run`` episode (use it as a context manager around the run).

    Args:
        console: Where the trace goes.
        live: Show the live status line (default: when the console is a terminal).
    """

    def __init__(self, console: Console, *, live: bool | None = None) -> None:
        self.console = console
        self.state = TurnStatus()
        self.live = console.is_terminal if live is None else live
        self._status: Status | None = None

    def __enter__(self) -> LiveTrace:
        if self.live:
            self._status = Status(self.state, console=self.console, spinner="dots")
            self._status.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, event: AgentEvent) -> None:
        """Print what ``event`` adds to the trace and update the status."""
        state = self.state
        if isinstance(event, TurnStarted):
            state.start_turn(event.turn)
            if not self.live:
                self.console.print(f"  [dim]turn {event.turn}: thinking…[/]")
        elif isinstance(event, TextDelta):
            state.tokens += 1
        elif isinstance(event, PhaseEvent):
            self._phase(event)
        elif isinstance(event, CallStarted):
            state.running += 1
        elif isinstance(event, CallFinished):
            state.running = max(state.running - 1, 0)
            if not event.result.ok:
                kind = event.result.error_kind.value if event.result.error_kind else "error"
                detail = f" — {_short(event.result.error)}" if event.result.error else ""
                self.console.print(
                    f"    [red]✗ {escape(event.result.name)} \\[{kind}]{escape(detail)}[/]",
                    highlight=False,
                )
        elif isinstance(event, TurnFinished):
            state.running = 0
        elif isinstance(event, ErrorEvent):
            label = "failed" if event.fatal else "error"
            message = escape(_short(event.message))
            self.console.print(
                f"  [bold red]✗ turn {event.turn} {label}:[/] [red]{message}[/]",
                highlight=False,
            )
        elif isinstance(event, EpisodeFinished) and self._status is not None:
            self._status.stop()
            self._status = None

    def _phase(self, event: PhaseEvent) -> None:
        tokens = f", {self.state.tokens} tokens" if self.state.tokens else ""
        elapsed = time.monotonic() - self.state.started
        self.console.print(f"  [dim]turn {event.turn}: model {elapsed:.1f} s{tokens}[/]")
        if event.calls:
            # React mode declares no phase: its turns are plain calls.
            label = event.phase or "call"
            names = ", ".join(call.name for call in event.calls)
            self.console.print(
                f"  [bold]{label}[/] × {len(event.calls)}: {escape(names)}", highlight=False
            )
        for error in event.format_errors:
            self.console.print(
                f"    [yellow]⚠ format error \\[{error.kind.value}]: {escape(error.message)}[/]",
                highlight=False,
            )

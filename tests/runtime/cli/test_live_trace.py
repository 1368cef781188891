"""``run``'s live trace: a status line on a terminal, plain lines when redirected."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from paraagent_runtime.cli.live_trace import LiveTrace
from paraagent_runtime.events import CallFinished, CallStarted, PhaseEvent, TextDelta, TurnStarted
from paraagent_runtime.tools import ToolCall, ToolErrorKind, ToolResult

CALL = ToolCall(id="t0-0", name="weather__forecast", arguments={"city": "Paris"})


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=80, no_color=True), buffer


def _feed(trace: LiveTrace) -> None:
    trace(TurnStarted(turn=0))
    for piece in ("<phase>", "execute", "</phase>"):
        trace(TextDelta(turn=0, text=piece))
    trace(PhaseEvent(turn=0, phase="execute", calls=[CALL]))
    trace(CallStarted(turn=0, call=CALL))


def test_a_terminal_gets_a_live_status_of_the_turn() -> None:
    console, buffer = _console(terminal=True)
    with LiveTrace(console) as trace:
        assert trace.live
        _feed(trace)
        assert trace.state.describe().startswith("turn 0 · running 1 call · ")
        assert trace.state.describe().endswith(" s · 3 tokens")
        trace(CallFinished(turn=0, result=ToolResult.failure(CALL, ToolErrorKind.TIMEOUT, "slow")))
        assert "thinking" in trace.state.describe()
    printed = Text.from_ansi(buffer.getvalue()).plain
    assert "turn 0 · " in printed  # the status line was drawn
    assert "execute × 1: weather__forecast" in printed
    assert "✗ weather__forecast [timeout] — slow" in printed
    assert "turn 0: thinking…" not in printed
    assert "turn 0: model " in printed and " s, 3 tokens" in printed


def test_redirected_output_is_plain_lines_without_a_status() -> None:
    console, buffer = _console(terminal=False)
    with LiveTrace(console) as trace:
        assert not trace.live
        _feed(trace)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "  turn 0: thinking…"
    assert lines[1].startswith("  turn 0: model ") and lines[1].endswith(" s, 3 tokens")
    assert lines[2] == "  execute × 1: weather__forecast"
    assert "\x1b" not in buffer.getvalue()

"""Step counters with an ETA: a bar on a terminal, one line per step when redirected."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from training.progress import StepProgress


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=100, no_color=True), buffer


def test_redirected_output_gets_one_line_per_step_with_an_eta() -> None:
    console, buffer = _console(terminal=False)
    with StepProgress("sft", 4, console=console, start=1) as progress:
        assert progress.eta_s() is None
        progress.advance_to(2, "loss 1.2345")
        eta = progress.eta_s()
        progress.advance_to(3)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "sft: steps 1/4 done, 3 to go"
    assert lines[1].startswith("sft step 2/4 · 0:00:00 elapsed · ETA ")
    assert lines[1].endswith(" · loss 1.2345")
    assert lines[2].startswith("sft step 3/4 · ") and lines[2].count("·") == 2
    # The rate counts only this run's steps (one so far), not the resumed step it started from.
    assert eta is not None and eta >= 0


def test_a_terminal_gets_a_bar_with_the_step_count() -> None:
    console, buffer = _console(terminal=True)
    with StepProgress("rl", 10, console=console) as progress:
        assert progress.live
        progress.advance_to(3, "reward 0.500")
    printed = Text.from_ansi(buffer.getvalue()).plain
    assert "rl" in printed and "3/10" in printed and "reward 0.500" in printed
    assert "rl step 3/10" not in printed


def test_the_unit_counted_is_named() -> None:
    console, buffer = _console(terminal=False)
    with StepProgress("demos", 2, console=console, unit="task") as progress:
        progress.advance_to(1)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "demos: tasks 0/2 done, 2 to go"
    assert lines[1].startswith("demos task 1/2 · ")

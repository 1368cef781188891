"""Step counters with an ETA for long training runs, without ``-v``.

On a terminal a rich bar (steps done of the total, elapsed, remaining, the last metrics); when
the output is redirected, one plain line per step (``sft step 3/20 · 0:00:42 elapsed · ETA
0:03:58 · loss 1.2345``), so a log file shows the run advancing. The rate counts only the steps
of this process, so a resumed run's ETA is not skewed by the steps it inherited.
"""

from __future__ import annotations

import time
from datetime import timedelta
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["StepProgress"]


def _clock(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))


class StepProgress:
    """Counts a run's optimizer steps and shows them with an ETA (a context manager).

    Args:
        label: The stage's name (``sft``, ``rl``).
        total: The step the run ends at.
        console: Where it prints (default: stdout).
        start: The step the run starts from (a resumed run's step).
        live: Draw a bar (default: when the console is a terminal) rather than one line a step.
        unit: What is counted (``step``; ``task`` for demonstrations).
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        console: Console | None = None,
        start: int = 0,
        live: bool | None = None,
        unit: str = "step",
    ) -> None:
        self.label = label
        self.unit = unit
        self.total = total
        self.console = console or Console()
        self.start = self.step = start
        self.live = self.console.is_terminal if live is None else live
        self._started = time.monotonic()
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> StepProgress:
        return self.begin()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.end()

    def begin(self) -> StepProgress:
        """Start the clock and the bar (or print where the run starts); return ``self``."""
        self._started = time.monotonic()
        if self.live:
            self._bar = Progress(
                TextColumn(f"[bold]{self.label}[/]"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                TextColumn("{task.fields[summary]}"), console=self.console,
            )  # fmt: skip
            self._bar.start()
            self._task = self._bar.add_task(
                self.label, total=self.total, completed=self.start, summary=""
            )
        else:
            self.console.print(
                f"{self.label}: {self.unit}s {self.start}/{self.total} done, "
                f"{self.total - self.start} to go",
                highlight=False,
            )
        return self

    def end(self) -> None:
        """Stop the bar (a no-op when redirected or already ended)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def eta_s(self) -> float | None:
        """Seconds left at this process's rate so far (``None`` before its first step)."""
        done = self.step - self.start
        if done <= 0:
            return None
        return (time.monotonic() - self._started) / done * max(self.total - self.step, 0)

    def line(self, summary: str = "") -> str:
        """The plain line of the current step."""
        eta = self.eta_s()
        parts = [
            f"{self.label} {self.unit} {self.step}/{self.total}",
            f"{_clock(time.monotonic() - self._started)} elapsed",
            f"ETA {_clock(eta)}" if eta is not None else "ETA -",
        ]
        return " · ".join([*parts, summary] if summary else parts)

    def advance_to(self, step: int, summary: str = "") -> None:
        """Record that ``step`` steps are done; ``summary`` is the step's metrics in a few words."""
        self.step = step
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=step, summary=summary)
        elif not self.live:
            self.console.print(self.line(summary), highlight=False)

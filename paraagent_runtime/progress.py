"""Progress of running tool calls: a source reports it, the dispatcher says which call it is for.

A tool source does not know which model-issued call it is serving (the same tool may run several
times in one parallel turn). The dispatcher runs each call in its own task and installs a reporter
for that task with :func:`reporting_to`; a source calls :func:`report_progress` (or passes
:func:`current_reporter` on, as the MCP source does with a server's progress notifications), and
the update reaches the reporter of the call it belongs to. Outside a call it goes nowhere.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar

__all__ = ["ProgressReporter", "current_reporter", "report_progress", "reporting_to"]

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""Receives ``(progress, total, message)`` for the call running in the current task."""

_reporter: ContextVar[ProgressReporter | None] = ContextVar("paraagent_progress", default=None)


def current_reporter() -> ProgressReporter | None:
    """The reporter of the call running in this task, if any."""
    return _reporter.get()


async def report_progress(
    progress: float, total: float | None = None, message: str | None = None
) -> None:
    """Report progress of the call running in this task (a no-op outside a dispatched call)."""
    reporter = _reporter.get()
    if reporter is not None:
        outcome = reporter(progress, total, message)
        if inspect.isawaitable(outcome):
            await outcome


@contextlib.contextmanager
def reporting_to(reporter: ProgressReporter | None) -> Iterator[None]:
    """Send this task's progress reports to ``reporter`` for the duration of the block."""
    token = _reporter.set(reporter)
    try:
        yield
    finally:
        _reporter.reset(token)

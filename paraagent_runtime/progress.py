"""Progress of running tool calls: a source reports it, the dispatcher says which call it is for.

A tool source does not know which model-issued call it is serving (the same tool may run several
times in one parallel turn). The dispatcher runs each call in its own task and installs a reporter
for that task with :func:`reporting_to`; a source calls :func:`report_progress` (or passes
:func:`current_reporter` on, as the MCP source does with a server's progress notifications), and
the update reaches the reporter of the call it belongs to. Outside a call it goes nowhere.

A report that arrives after the call's block ended (MCP delivers notifications from another task,
sometimes after the result) is dropped, and a reporter that raises is logged: progress never fails
or delays the outcome of the call itself.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar

__all__ = ["ProgressReporter", "current_reporter", "report_progress", "reporting_to"]

logger = logging.getLogger(__name__)

ProgressReporter = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""Receives ``(progress, total, message)`` for the call running in the current task."""

_Guarded = Callable[[float, float | None, str | None], Awaitable[None]]

_reporter: ContextVar[_Guarded | None] = ContextVar("paraagent_progress", default=None)


def current_reporter() -> _Guarded | None:
    """The reporter of the call running in this task, if any (safe to call after it ends)."""
    return _reporter.get()


async def report_progress(
    progress: float, total: float | None = None, message: str | None = None
) -> None:
    """Report progress of the call running in this task (a no-op outside a dispatched call)."""
    reporter = _reporter.get()
    if reporter is not None:
        await reporter(progress, total, message)


@contextlib.contextmanager
def reporting_to(reporter: ProgressReporter | None) -> Iterator[None]:
    """Send this task's progress reports to ``reporter`` for the duration of the block."""
    if reporter is None:
        yield
        return
    active = True

    async def guarded(progress: float, total: float | None, message: str | None) -> None:
        if not active:
            return
        try:
            outcome = reporter(progress, total, message)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:  # noqa: BLE001 - a broken display must not fail the call
            logger.warning("a progress reporter failed", exc_info=True)

    token = _reporter.set(guarded)
    try:
        yield
    finally:
        active = False
        _reporter.reset(token)

"""Tool sources started in the background: each on its own, failed ones retried with back-off.

``paraagent serve`` answers its client before its servers are up. A :class:`SourceStartup` lists
every source of a toolspace in a task of its own (:meth:`Toolspace.list_source`), so a slow or
hanging server holds back nobody, and listings that arrive together share one rebuild of the
name table and index; a source whose listing fails is tried again after the
:class:`~.source.ReconnectPolicy` back-off for as long as the start-up runs. Every change of state
is one log line naming each source's state (``serve: 1 of 2 sources ready (3 tools): demo ready
(3 tools), slow retrying in 2.0s after 2 attempts (…)``) and a call of ``on_change``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from ..toolspace import Toolspace
from .source import ReconnectPolicy

__all__ = ["SourceStartup", "SourceStatus"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceStatus:
    """Where one source's start-up stands.

    Attributes:
        state: ``starting`` (first attempt in flight), ``ready`` (listed) or ``retrying``.
        tools: How many of its tools are usable (``ready`` only).
        error: Why the last attempt failed (``retrying`` only).
        retry_in_s: The back-off before the next attempt (``retrying`` only).
        failures: Failed attempts so far.
    """

    state: Literal["starting", "ready", "retrying"]
    tools: int = 0
    error: str | None = None
    retry_in_s: float = 0.0
    failures: int = 0

    def describe(self) -> str:
        """The state in a few words."""
        if self.state == "ready":
            return f"ready ({self.tools} tools)"
        if self.state == "retrying":
            return (
                f"retrying in {self.retry_in_s:.1f}s after {self.failures} "
                f"failed attempt{'s' if self.failures > 1 else ''} ({self.error})"
            )
        return "starting"


class SourceStartup:
    """Lists the sources of a toolspace in the background and keeps retrying those that fail.

    Args:
        toolspace: The toolspace whose sources start (not refreshed yet).
        reconnect: The back-off between failed attempts (MCP sources should use the same one,
            so their own reconnection window has passed when the next attempt comes).
        on_change: Awaited after the toolspace's tools changed (a source became ready, or a
            ready source's tool list changed).
        on_settled: Called once, when every source had its first attempt.
    """

    def __init__(
        self,
        toolspace: Toolspace,
        *,
        reconnect: ReconnectPolicy | None = None,
        on_change: Callable[[], Awaitable[None]] | None = None,
        on_settled: Callable[[], None] | None = None,
    ) -> None:
        self.toolspace = toolspace
        self._reconnect = reconnect or ReconnectPolicy()
        self._on_change = on_change
        self._on_settled = on_settled
        self._status = {name: SourceStatus("starting") for name in toolspace.sources}
        self._first_attempts = set(self._status)
        self._settled = asyncio.Event()
        if not self._first_attempts:
            self._settled.set()
        self._listed = 0  # listings so far
        self._built = 0  # listings the last rebuild included
        self._rebuilding = asyncio.Lock()

    @property
    def status(self) -> Mapping[str, SourceStatus]:
        """Each source's state, by source name."""
        return MappingProxyType(self._status)

    @property
    def settled(self) -> bool:
        """Whether every source had its first attempt (ready or retrying)."""
        return self._settled.is_set()

    async def wait_settled(self) -> None:
        """Wait until every source had its first attempt."""
        await self._settled.wait()

    def starting(self) -> list[str]:
        """The sources whose first attempt is still in flight."""
        return [name for name, status in self._status.items() if status.state == "starting"]

    def status_line(self) -> str:
        """One line: how many sources are ready, with how many tools, and each one's state."""
        ready = [status for status in self._status.values() if status.state == "ready"]
        tools = sum(status.tools for status in ready)
        states = ", ".join(f"{name} {status.describe()}" for name, status in self._status.items())
        return f"serve: {len(ready)} of {len(self._status)} sources ready ({tools} tools): {states}"

    def summary(self) -> str:
        """One short line: sources ready, their tools, and the sources not ready (by name)."""
        ready = [status for status in self._status.values() if status.state == "ready"]
        tools = sum(status.tools for status in ready)
        line = (
            f"serve: {len(ready)} of {len(self._status)} tool sources ready, "
            f"{tools} tool{'' if tools == 1 else 's'}"
        )
        down = [name for name, status in self._status.items() if status.state != "ready"]
        return f"{line}; not ready: {', '.join(down)} (retrying)" if down else line

    async def run(self) -> None:
        """Start every source at once; return when all are ready (cancel to stop retrying)."""
        if not self._status and self._on_settled is not None:
            self._on_settled()
        async with asyncio.TaskGroup() as group:
            for name in self._status:
                group.create_task(self._start(name))

    async def source_changed(self, name: str) -> None:
        """A ready source's tool list changed: list it again, rebuild, call ``on_change``."""
        await self.toolspace.list_source(name)
        await self._publish()
        if name not in self.toolspace.source_errors:
            self._set(name, SourceStatus("ready", tools=self._count(name)))

    async def _publish(self) -> None:
        """Rebuild (and call ``on_change``) unless a rebuild since this listing already did."""
        self._listed += 1
        mine = self._listed
        await asyncio.sleep(0)  # let listings that finish together land: one rebuild for all
        async with self._rebuilding:
            if self._built >= mine:
                return
            self._built = self._listed
            await self.toolspace.rebuild()
            if self._on_change is not None:
                await self._on_change()

    async def _start(self, name: str) -> None:
        failures = 0
        while True:
            await self.toolspace.list_source(name)
            error = self.toolspace.source_errors.get(name)
            if error is None:
                await self._publish()
                self._set(name, SourceStatus("ready", tools=self._count(name), failures=failures))
                return
            failures += 1
            delay = self._reconnect.delay(failures)
            self._set(name, SourceStatus("retrying", 0, error, delay, failures))
            await asyncio.sleep(delay)

    def _count(self, name: str) -> int:
        return sum(1 for spec in self.toolspace.tools.values() if spec.source == name)

    def _set(self, name: str, status: SourceStatus) -> None:
        self._status[name] = status
        self._first_attempts.discard(name)
        if not self._first_attempts and not self._settled.is_set():
            self._settled.set()
            if self._on_settled is not None:
                self._on_settled()
        # Shown by default while any source is failing, or has recovered from failing.
        troubled = status.failures or any(
            other.state == "retrying" for other in self._status.values()
        )
        level = logging.WARNING if troubled else logging.INFO
        logger.log(level, "%s", self.status_line())

"""map_in_order: bounded concurrency, results in input order, failures cancel the rest."""

from __future__ import annotations

import asyncio
import threading
from contextvars import ContextVar

import pytest

from paraagent_runtime.concurrency import SyncExecutor, map_in_order, run_sync
from paraagent_runtime.errors import ConfigError


async def test_results_come_in_input_order_with_at_most_n_running() -> None:
    running = peak = 0
    finished: list[int] = []

    async def run(item: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01 * (5 - item))  # later items finish first
        running -= 1
        finished.append(item)
        return item * 10

    results = [result async for result in map_in_order(run, range(5), concurrency=3)]
    assert results == [0, 10, 20, 30, 40]
    assert peak == 3
    assert finished != sorted(finished)


async def test_a_failure_propagates_and_cancels_the_other_runs() -> None:
    cancelled: list[int] = []

    async def run(item: int) -> int:
        if item == 0:
            raise ValueError("boom")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(item)
            raise
        return item

    with pytest.raises(ValueError, match="boom"):
        async for _ in map_in_order(run, range(3), concurrency=3):
            pass
    assert sorted(cancelled) == [1, 2]


async def test_concurrency_below_one_is_a_config_error() -> None:
    async def run(item: int) -> int:
        return item

    with pytest.raises(ConfigError, match="concurrency must be >= 1, got 0"):
        async for _ in map_in_order(run, [1], concurrency=0):
            pass


_marker: ContextVar[str] = ContextVar("marker", default="unset")


async def test_run_sync_uses_the_installed_pool_with_the_callers_context() -> None:
    executor = SyncExecutor(2)

    def where() -> tuple[str, str]:
        return threading.current_thread().name, _marker.get()

    _marker.set("caller")
    try:
        outside = await run_sync(where)
        with executor.installed():
            inside = await run_sync(where)
        after = await run_sync(where)
    finally:
        executor.close()
    assert inside[0].startswith("paraagent-tool") and inside[1] == "caller"
    assert not outside[0].startswith("paraagent-tool") and outside[1] == "caller"
    assert not after[0].startswith("paraagent-tool")


async def test_a_closed_executor_starts_a_fresh_pool_and_bad_sizes_are_refused() -> None:
    executor = SyncExecutor(1)
    assert await executor.run(lambda: 1) == 1
    executor.close()
    assert await executor.run(lambda: 2) == 2
    executor.close()
    with pytest.raises(ConfigError, match="max_workers"):
        SyncExecutor(0)

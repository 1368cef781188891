"""Collecting concurrent generation requests into batches: a small cousin of continuous batching.

Requests arriving within a short window that share a compatibility key (same decoding settings)
run together in one blocking batch call in a worker thread; one batch runs at a time per
scheduler. Batches form per arrival window, not per decoding step: a request arriving while a
batch generates waits for the next batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import ConfigError

__all__ = ["BatchScheduler", "BatchStats"]

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass
class BatchStats:
    """Counters of a :class:`BatchScheduler`.

    Attributes:
        batches: batch calls made (one ``model.generate`` each for a policy).
        requests: requests those batches held.
        largest: the largest batch so far.
    """

    batches: int = 0
    requests: int = 0
    largest: int = 0


@dataclass(eq=False)
class _Pending(Generic[Item, Result]):
    item: Item
    key: Hashable
    future: asyncio.Future[Result]
    arrived: float


class BatchScheduler(Generic[Item, Result]):
    """Runs submitted items in batches of compatible items, one batch at a time.

    Args:
        run: the blocking batch function (run in a worker thread); returns one result per item,
            in order. An exception it raises fails every request of that batch.
        window_s: how long the oldest waiting request waits for companions before its batch
            starts (a batch that is already full starts at once).
        max_batch_size: the most items in one batch; 1 runs every request alone.

    Raises:
        ConfigError: a negative window or a batch size below 1.
    """

    def __init__(
        self,
        run: Callable[[list[Item]], Sequence[Result]],
        *,
        window_s: float,
        max_batch_size: int,
    ) -> None:
        if window_s < 0:
            raise ConfigError(f"batch_window_s must be >= 0, got {window_s}")
        if max_batch_size < 1:
            raise ConfigError(f"max_batch_size must be >= 1, got {max_batch_size}")
        self._run = run
        self.window_s = window_s
        self.max_batch_size = max_batch_size
        self.stats = BatchStats()
        self._pending: list[_Pending[Item, Result]] = []
        self._runner: asyncio.Task[None] | None = None

    def submit(self, item: Item, key: Hashable) -> asyncio.Future[Result]:
        """Queue ``item``; items with equal keys may share a batch.

        A key equal to no other (``object()``) makes the item run alone. Cancelling the returned
        future withdraws an item that has not started; a started one is the batch function's
        to stop (its result is then dropped).
        """
        loop = asyncio.get_running_loop()
        if self._runner is not None and self._runner.get_loop() is not loop:
            # A new event loop (e.g. a second asyncio.run): the old loop's requests died with it.
            self._pending.clear()
            self._runner = None
        future: asyncio.Future[Result] = loop.create_future()
        self._pending.append(_Pending(item, key, future, loop.time()))
        if self._runner is None or self._runner.done():
            self._runner = loop.create_task(self._drain())
        return future

    async def wait_idle(self) -> None:
        """Wait until every queued and running batch of this event loop has finished."""
        runner = self._runner
        if runner is not None and runner.get_loop() is asyncio.get_running_loop():
            await asyncio.shield(runner)

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._pending = [entry for entry in self._pending if not entry.future.done()]
            if not self._pending:
                return
            head = self._pending[0]
            group = [entry for entry in self._pending if entry.key == head.key]
            delay = head.arrived + self.window_s - loop.time()
            if len(group) < self.max_batch_size and delay > 0:
                await asyncio.sleep(delay)
                continue
            batch = group[: self.max_batch_size]
            taken = set(map(id, batch))
            self._pending = [entry for entry in self._pending if id(entry) not in taken]
            await self._run_batch(batch)

    async def _run_batch(self, batch: list[_Pending[Item, Result]]) -> None:
        self.stats.batches += 1
        self.stats.requests += len(batch)
        self.stats.largest = max(self.stats.largest, len(batch))
        try:
            results = await asyncio.to_thread(self._run, [entry.item for entry in batch])
        except asyncio.CancelledError:
            for entry in batch:
                entry.future.cancel()
            raise
        except Exception as exc:
            for entry in batch:
                if not entry.future.done():
                    entry.future.set_exception(exc)
            return
        for entry, result in zip(batch, results, strict=True):
            if not entry.future.done():
                entry.future.set_result(result)

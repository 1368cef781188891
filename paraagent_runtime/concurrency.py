"""Running work concurrently: coroutines a few at a time in input order, blocking calls in threads.

:func:`map_in_order` runs independent coroutines at most ``concurrency`` at once and hands their
results back in input order. :class:`SyncExecutor` is the thread pool blocking tool functions run
in: the dispatcher owns one sized by its own concurrency limit and installs it for the calls it
runs (:meth:`SyncExecutor.installed`), so :func:`run_sync` never queues a call the dispatcher has
admitted behind asyncio's default executor (``min(32, cores + 4)`` threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any, TypeVar

from .errors import ConfigError

__all__ = ["SyncExecutor", "map_in_order", "run_sync"]

Item = TypeVar("Item")
Result = TypeVar("Result")


async def map_in_order(
    run: Callable[[Item], Awaitable[Result]], items: Sequence[Item], *, concurrency: int
) -> AsyncIterator[Result]:
    """Run ``run(item)`` for every item, at most ``concurrency`` at once; yield results in order.

    A result is yielded as soon as it and every earlier one are done, so consumers (progress
    lines, trajectory writers) see input order whatever order the runs finish in. When a run
    fails, or the consumer stops early, the remaining runs are cancelled.

    Raises:
        ConfigError: ``concurrency`` is below 1.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
    slots = asyncio.Semaphore(concurrency)

    async def bounded(item: Item) -> Result:
        async with slots:
            return await run(item)

    tasks = [asyncio.ensure_future(bounded(item)) for item in items]
    try:
        for task in tasks:
            yield await task
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class SyncExecutor:
    """A thread pool for blocking callables, started on first use and shut down by its owner.

    Args:
        max_workers: threads at most (the owner's concurrency limit).

    Raises:
        ConfigError: ``max_workers`` is below 1.
    """

    def __init__(self, max_workers: int) -> None:
        if max_workers < 1:
            raise ConfigError(f"max_workers must be >= 1, got {max_workers}")
        self.max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._finalizer: weakref.finalize | None = None

    def _started(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="paraagent-tool")
            # An owner that is dropped without close() still releases the idle threads.
            self._finalizer = weakref.finalize(self, self._pool.shutdown, wait=False)
        return self._pool

    async def run(self, func: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
        """Run ``func(*args, **kwargs)`` in the pool with this task's context variables."""
        call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._started(), call)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Make :func:`run_sync` use this pool in the current context for the block."""
        token = _current.set(self)
        try:
            yield
        finally:
            _current.reset(token)

    def close(self) -> None:
        """Stop the threads once their running calls end; calls not yet started are dropped."""
        if self._finalizer is not None:
            self._finalizer.detach()
        pool, self._pool, self._finalizer = self._pool, None, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


_current: ContextVar[SyncExecutor | None] = ContextVar("paraagent_sync_executor", default=None)


async def run_sync(func: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """Run a blocking callable in the installed :class:`SyncExecutor`, else in a worker thread.

    Outside a dispatched call (no executor installed) this is :func:`asyncio.to_thread`.
    """
    executor = _current.get()
    if executor is None:
        return await asyncio.to_thread(func, *args, **kwargs)
    return await executor.run(func, *args, **kwargs)

"""Running independent coroutines a few at a time while handing results back in input order."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeVar

from .errors import ConfigError

__all__ = ["map_in_order"]

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

"""Dispatcher benchmark: turn latency of K parallel calls, and the dispatcher's own cost.

Does a turn of K parallel calls cost one call's latency, and what does the dispatcher add per
call? Run ``python -m benchmarks.dispatch`` (``--quick`` for a fast pass). Three measurements,
each the median of several repeats:

* **turn latency** — K calls of an in-process tool that sleeps L: the turn's wall time divided
  by L (target <= 1.05 for K <= 64), next to the same calls awaited one by one (the sequential
  baseline, ~K) and the speed-up between the two;
* **overhead** — N no-op calls through :meth:`Dispatcher.run_turn` versus the same calls made
  directly on the source with ``asyncio.gather``; the difference per call is the dispatcher's
  own cost (target < 0.5 ms);
* **fan-out strategies** — N no-op calls fanned out with ``asyncio.gather``, ``TaskGroup``,
  plain tasks + ``as_completed`` (what the dispatcher uses) and ``asyncio-pool`` when it is
  installed, to ground the choice of fan-out mechanism.

Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from paraagent_runtime import DispatchConfig, FunctionTool, FunctionToolSource, ToolCall, Toolspace
from paraagent_runtime.dispatch import Dispatcher

SCHEMA = {
    "type": "object",
    "properties": {"i": {"type": "integer"}},
    "required": ["i"],
    "additionalProperties": False,
}


async def _noop(i: int) -> int:
    return i


async def _median_wall(run: Callable[[], Awaitable[Any]], repeats: int) -> float:
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        await run()
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


async def _setup(
    latency_s: float, max_calls: int
) -> tuple[Dispatcher, Toolspace, FunctionToolSource]:
    async def sleep(i: int) -> int:
        await asyncio.sleep(latency_s)
        return i

    source = FunctionToolSource(
        "bench",
        [
            FunctionTool(sleep, input_schema=SCHEMA),
            FunctionTool(_noop, name="noop", input_schema=SCHEMA),
        ],
    )
    toolspace = Toolspace([source])
    await toolspace.refresh()
    config = DispatchConfig(
        max_calls_per_turn=max_calls,
        max_concurrency=max_calls,
        per_source_concurrency=max_calls,
        dedup=False,
    )
    return Dispatcher(config), toolspace, source


def _calls(name: str, count: int) -> list[ToolCall]:
    return [ToolCall(id=f"c{i}", name=name, arguments={"i": i}) for i in range(count)]


async def _turn_latency(
    dispatcher: Dispatcher, toolspace: Toolspace, ks: list[int], latency_s: float, repeats: int
) -> list[dict[str, float]]:
    session = await toolspace.new_session()
    rows = []
    for k in ks:
        calls = _calls("bench__sleep", k)

        async def parallel(calls: list[ToolCall] = calls) -> None:
            results = await dispatcher.run_turn(calls, session)
            failed = [result for result in results if not result.ok]
            if failed:
                raise RuntimeError(f"benchmark call failed: {failed[0].error}")

        async def sequential(calls: list[ToolCall] = calls) -> None:
            for call in calls:
                await dispatcher.run_turn([call], session)

        parallel_wall = await _median_wall(parallel, repeats)
        sequential_wall = await _median_wall(sequential, 1 if k > 8 else repeats)
        rows.append(
            {
                "k": k,
                "parallel_over_latency": parallel_wall / latency_s,
                "sequential_over_latency": sequential_wall / latency_s,
                "speedup": sequential_wall / parallel_wall,
            }
        )
    return rows


async def _overhead(
    dispatcher: Dispatcher,
    toolspace: Toolspace,
    source: FunctionToolSource,
    n: int,
    repeats: int,
) -> dict[str, float]:
    session = await toolspace.new_session()
    calls = _calls("bench__noop", n)

    async def through_dispatcher() -> None:
        await dispatcher.run_turn(calls, session)

    async def direct() -> None:
        await asyncio.gather(*(source.call_tool("noop", call.arguments) for call in calls))

    await through_dispatcher()
    dispatched = await _median_wall(through_dispatcher, repeats) / n
    raw = await _median_wall(direct, repeats) / n
    return {
        "calls": n,
        "dispatcher_ms_per_call": dispatched * 1e3,
        "direct_gather_ms_per_call": raw * 1e3,
        "overhead_ms_per_call": (dispatched - raw) * 1e3,
    }


async def _fan_out_strategies(n: int, repeats: int) -> dict[str, float]:
    async def gather() -> None:
        await asyncio.gather(*(_noop(i) for i in range(n)))

    async def task_group() -> None:
        async with asyncio.TaskGroup() as group:
            for i in range(n):
                group.create_task(_noop(i))

    async def tasks_as_completed() -> None:
        tasks = [asyncio.create_task(_noop(i)) for i in range(n)]
        for next_done in asyncio.as_completed(tasks):
            await next_done

    strategies: dict[str, Callable[[], Awaitable[None]]] = {
        "gather": gather,
        "task_group": task_group,
        "tasks_as_completed": tasks_as_completed,
    }
    try:
        from asyncio_pool import AioPool
    except ImportError:
        AioPool = None  # noqa: N806 - optional comparison only
    if AioPool is not None:

        async def asyncio_pool() -> None:
            async with AioPool(size=n) as pool:
                await pool.map(_noop, range(n))

        strategies["asyncio_pool"] = asyncio_pool
    return {name: await _median_wall(run, repeats) / n * 1e6 for name, run in strategies.items()}


async def run_benchmark(*, quick: bool = False) -> dict[str, Any]:
    """Run every measurement and return the JSON-ready report."""
    ks = [1, 4, 16, 64] if quick else [1, 2, 4, 8, 16, 64]
    latency_s = 0.05 if quick else 0.2
    repeats = 3 if quick else 5
    overhead_repeats = 20 if quick else 100
    dispatcher, toolspace, source = await _setup(latency_s, max(ks))
    turn = await _turn_latency(dispatcher, toolspace, ks, latency_s, repeats)
    overhead = await _overhead(dispatcher, toolspace, source, 64, overhead_repeats)
    strategies = await _fan_out_strategies(64, overhead_repeats)
    return {
        "benchmark": "dispatch",
        "quick": quick,
        "python": platform.python_version(),
        "latency_s": latency_s,
        "repeats": repeats,
        "turn": turn,
        "max_parallel_over_latency": max(row["parallel_over_latency"] for row in turn),
        "overhead": overhead,
        "fan_out_us_per_call": strategies,
    }


def _print_tables(report: dict[str, Any], console: Console) -> None:
    table = Table(title=f"turn wall / L (L = {report['latency_s'] * 1e3:.0f} ms, target <= 1.05)")
    for column in ("K", "parallel / L", "sequential / L", "speed-up"):
        table.add_column(column, justify="right")
    for row in report["turn"]:
        table.add_row(
            str(row["k"]),
            f"{row['parallel_over_latency']:.3f}",
            f"{row['sequential_over_latency']:.2f}",
            f"{row['speedup']:.1f}x",
        )
    console.print(table)
    overhead = report["overhead"]
    console.print(
        f"dispatcher {overhead['dispatcher_ms_per_call']:.3f} ms/call vs direct gather "
        f"{overhead['direct_gather_ms_per_call']:.3f} ms/call -> overhead "
        f"{overhead['overhead_ms_per_call']:.3f} ms/call (target < 0.5)"
    )
    strategies = ", ".join(f"{name} {us:.1f}" for name, us in report["fan_out_us_per_call"].items())
    console.print(f"fan-out of {overhead['calls']} no-op calls, µs/call: {strategies}")


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, run the benchmark, print JSON then a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer K values, L = 50 ms, fewer repeats"
    )
    args = parser.parse_args(argv)
    report = asyncio.run(run_benchmark(quick=args.quick))
    print(json.dumps(report, indent=2))
    _print_tables(report, Console())


if __name__ == "__main__":
    main()

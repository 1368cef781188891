"""MCP client benchmark: parallel turns on a real stdio server; calls/s over stdio and HTTP.

Measures (issues 5 and 24):

1. one turn of 64 parallel calls, through the runtime's dispatcher, to a stdio server whose tool
   sleeps ``L``: turn wall / L (1.0 is perfect overlap), beside the same 64 calls made with the
   bare ``mcp`` SDK client over its own stdio session in the same run (turns interleaved, the
   median of ``--repeats``): the dispatcher's cost is the difference of the two ratios, and the
   client process's CPU time per call of each (load on a shared machine moves wall times, much
   less CPU time);
2. the same 64 calls issued one at a time (what a sequential host does): wall, and the ratio;
3. calls per second for a no-op tool at 1 / 16 / 256 concurrent calls, over stdio and over
   streamable HTTP (the server runs in its own process in both cases).

Run ``python -m benchmarks.mcp [--latency 0.2] [--json out.json]``; prints JSON, then a table.
The same module is the benchmark server (``--serve stdio|http``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from benchmarks._mcp_harness import connected_source, free_port
from paraagent_runtime import DispatchConfig, ToolCall, Toolspace
from paraagent_runtime.dispatch import Dispatcher
from paraagent_runtime.mcp import MCPServerConfig, MCPToolSource

TURN_CALLS = 64
CONCURRENCY = (1, 16, 256)


def build_server() -> MCPServer:
    """The benchmark server: ``sleep(seconds)`` and ``noop()``."""
    server = MCPServer("bench")

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Sleep for ``seconds``."""
        await anyio.sleep(seconds)
        return "ok"

    @server.tool()
    def noop() -> str:
        """Do nothing."""
        return "ok"

    return server


_SERVER_ARGS = ["-m", "benchmarks.mcp", "--serve", "stdio"]
_ROOT = str(Path(__file__).resolve().parents[1])


def _stdio_config(timeout: float) -> MCPServerConfig:
    return MCPServerConfig(
        type="stdio",
        command=sys.executable,
        args=_SERVER_ARGS,
        timeout=timeout,
        cwd=_ROOT,
    )


async def _bare_turn(client: Client, latency: float) -> tuple[float, float]:
    """Wall time and client CPU time of one 64-call turn made with the bare SDK client."""
    started, cpu = time.perf_counter(), time.process_time()
    results = await asyncio.gather(
        *(client.call_tool("sleep", {"seconds": latency}) for _ in range(TURN_CALLS))
    )
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if any(result.is_error for result in results):
        raise RuntimeError("a bare SDK call failed")
    return wall, cpu


async def _turns(latency: float, repeats: int) -> dict[str, Any]:
    source = MCPToolSource("bench", _stdio_config(timeout=latency * TURN_CALLS + 30))
    toolspace = Toolspace([source])
    bare = Client(StdioServerParameters(command=sys.executable, args=_SERVER_ARGS, cwd=_ROOT))
    try:
        await toolspace.refresh()
        await bare.__aenter__()
        config = DispatchConfig(
            max_calls_per_turn=TURN_CALLS,
            max_concurrency=TURN_CALLS,
            per_source_concurrency=TURN_CALLS,
            call_timeout_s=latency * TURN_CALLS + 30,
            dedup=False,
        )
        dispatcher = Dispatcher(config)
        calls = [
            ToolCall(id=f"c{i}", name="sleep", arguments={"seconds": latency})
            for i in range(TURN_CALLS)
        ]
        await dispatcher.run_turn(calls[:2], await toolspace.new_session())
        await _bare_turn(bare, latency)
        ours: list[float] = []
        theirs: list[float] = []
        our_cpu: list[float] = []
        their_cpu: list[float] = []
        failures = 0
        for _ in range(repeats):
            started, cpu = time.perf_counter(), time.process_time()
            results = await dispatcher.run_turn(calls, await toolspace.new_session())
            ours.append(time.perf_counter() - started)
            our_cpu.append(time.process_time() - cpu)
            failures += sum(not result.ok for result in results)
            wall, cpu = await _bare_turn(bare, latency)
            theirs.append(wall)
            their_cpu.append(cpu)
        parallel, bare_wall = statistics.median(ours), statistics.median(theirs)
        per_call_us = statistics.median(our_cpu) / TURN_CALLS * 1e6
        bare_per_call_us = statistics.median(their_cpu) / TURN_CALLS * 1e6
        started = time.perf_counter()
        for call in calls:
            await source.call_tool("sleep", dict(call.arguments))
        sequential = time.perf_counter() - started
    finally:
        await bare.__aexit__(None, None, None)
        await toolspace.aclose()
    return {
        "calls": TURN_CALLS,
        "latency_s": latency,
        "repeats": repeats,
        "parallel_wall_s": round(parallel, 4),
        "parallel_wall_over_latency": round(parallel / latency, 3),
        "bare_sdk_wall_s": round(bare_wall, 4),
        "bare_sdk_wall_over_latency": round(bare_wall / latency, 3),
        "ratio_over_bare_sdk": round((parallel - bare_wall) / latency, 3),
        "client_cpu_per_call_us": round(per_call_us, 1),
        "bare_sdk_client_cpu_per_call_us": round(bare_per_call_us, 1),
        "client_cpu_over_bare_sdk": round(per_call_us / bare_per_call_us, 3),
        "parallel_failures": failures,
        "sequential_wall_s": round(sequential, 4),
        "sequential_over_parallel": round(sequential / parallel, 2),
    }


async def _throughput(source: MCPToolSource, concurrency: int) -> float:
    total = max(100, 2 * concurrency)
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await source.call_tool("noop", {})

    await asyncio.gather(*(one() for _ in range(min(total, 32))))
    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(total)))
    return total / (time.perf_counter() - started)


async def _rates(transport: str) -> dict[str, float]:
    process = None
    if transport == "stdio":
        config = _stdio_config(timeout=60)
    else:
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.mcp", "--serve", "http", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        config = MCPServerConfig(type="http", url=f"http://127.0.0.1:{port}/mcp", timeout=60)
    async with connected_source("bench", config, server=process) as source:
        return {str(c): round(await _throughput(source, c), 1) for c in CONCURRENCY}


async def run(latency: float, repeats: int = 5) -> dict[str, Any]:
    """Run every measurement and return the report."""
    return {
        "turn": await _turns(latency, repeats),
        "calls_per_s": {"stdio": await _rates("stdio"), "http": await _rates("http")},
    }


def table(report: dict[str, Any]) -> str:
    """A plain-text table of the report."""
    turn = report["turn"]
    lines = [
        f"64-call turn, tool sleeps L={turn['latency_s']}s (stdio; median of {turn['repeats']})",
        f"  paraagent  wall {turn['parallel_wall_s']:>8.3f}s"
        f"   wall/L {turn['parallel_wall_over_latency']:>6.3f}",
        f"  bare SDK   wall {turn['bare_sdk_wall_s']:>8.3f}s"
        f"   wall/L {turn['bare_sdk_wall_over_latency']:>6.3f}"
        f"   (paraagent - bare: {turn['ratio_over_bare_sdk']:+.3f})",
        f"  client CPU per call: paraagent {turn['client_cpu_per_call_us']:.0f} µs, bare SDK "
        f"{turn['bare_sdk_client_cpu_per_call_us']:.0f} µs "
        f"({turn['client_cpu_over_bare_sdk']:.2f}x; CPU time barely moves with machine load)",
        f"  sequential wall {turn['sequential_wall_s']:>8.3f}s"
        f"   ratio  {turn['sequential_over_parallel']:>6.1f}x",
        "no-op calls/s    " + "".join(f"{'c=' + c:>10}" for c in report["calls_per_s"]["stdio"]),
    ]
    for transport, rates in report["calls_per_s"].items():
        lines.append(f"  {transport:<15}" + "".join(f"{rate:>10.1f}" for rate in rates.values()))
    return "\n".join(lines)


def main() -> None:
    """Command-line entry point (benchmark, or ``--serve`` the benchmark server)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the sleep tool sleeps")
    parser.add_argument("--repeats", type=int, default=5, help="64-call turns per client")
    parser.add_argument("--json", help="also write the JSON report to this file")
    parser.add_argument(
        "--serve", choices=["stdio", "http"], help="run the benchmark server instead"
    )
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    if args.serve == "stdio":
        build_server().run("stdio")
        return
    if args.serve == "http":
        import uvicorn

        uvicorn.run(
            build_server().streamable_http_app(),
            host="127.0.0.1",
            port=args.port,
            log_level="error",
        )
        return
    report = asyncio.run(run(args.latency, args.repeats))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as handle:
            handle.write(text + "\n")
    print(table(report))


if __name__ == "__main__":
    main()

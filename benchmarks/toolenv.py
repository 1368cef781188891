"""ToolEnv benchmark: simulated calls per second in-process and over MCP, and paged tool listing.

1. calls/s of ``weather/get_current_weather`` (a world-backed handler) at 1 / 16 / 256 concurrent
   calls: in-process (``ToolEnvSimulator.call``), over MCP stdio and over MCP streamable HTTP
   (``paraagent toolenv serve`` in a child process, through the runtime's ``MCPToolSource``);
2. listing every tool of a catalog through paged ``tools/list`` (in-memory MCP client), for the
   built-in catalog and, with ``--catalog-file``, a built real catalog.

Prints JSON and a table; ``--json FILE`` also writes the JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client

from benchmarks._mcp_harness import connected_source, free_port
from mcp_servers.toolenv import ToolEnv, builtin_records
from mcp_servers.toolenv.geo import CITIES
from mcp_servers.toolenv.server import build_server
from paraagent_runtime.mcp import MCPServerConfig

CONCURRENCY = (1, 16, 256)
_SERVE = (
    "from mcp_servers.toolenv.serve import Transport, serve_catalog; "
    "serve_catalog(transport=Transport({t!r}), port={p})"
)


async def _rate(call: Any, concurrency: int) -> float:
    total = max(200, 2 * concurrency)
    gate = asyncio.Semaphore(concurrency)
    cities = [city.name for city in CITIES]

    async def one(index: int) -> None:
        async with gate:
            await call({"city": cities[index % len(cities)]})

    await asyncio.gather(*(one(i) for i in range(32)))
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(total)))
    return total / (time.perf_counter() - started)


async def _in_process() -> dict[str, float]:
    simulator = ToolEnv.builtin().simulator

    async def call(arguments: dict[str, Any]) -> Any:
        return await simulator.call("weather", "get_current_weather", arguments)

    return {str(c): round(await _rate(call, c), 1) for c in CONCURRENCY}


async def _over_mcp(transport: str) -> dict[str, float]:
    root = str(Path(__file__).resolve().parents[1])
    port = free_port()
    code = _SERVE.format(t=transport, p=port)
    process = None
    if transport == "stdio":
        config = MCPServerConfig(
            type="stdio", command=sys.executable, args=["-c", code], timeout=60, cwd=root
        )
    else:
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        config = MCPServerConfig(type="http", url=f"http://127.0.0.1:{port}/mcp", timeout=60)
    async with connected_source("toolenv", config, server=process) as source:

        async def call(arguments: dict[str, Any]) -> Any:
            return await source.call_tool("weather__get_current_weather", arguments)

        return {str(c): round(await _rate(call, c), 1) for c in CONCURRENCY}


async def _listing(name: str, env: ToolEnv, page_size: int) -> dict[str, Any]:
    started = time.perf_counter()
    async with Client(build_server(env, page_size=page_size)) as client:
        tools, pages, cursor = 0, 0, None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools, pages, cursor = tools + len(page.tools), pages + 1, page.next_cursor
            if cursor is None:
                break
    seconds = time.perf_counter() - started
    return {
        "catalog": name,
        "tools": tools,
        "pages": pages,
        "page_size": page_size,
        "seconds": round(seconds, 3),
        "tools_per_s": round(tools / seconds, 1),
    }


async def run(catalog_file: Path | None, page_size: int) -> dict[str, Any]:
    """Run every measurement and return the report."""
    listings = [await _listing("builtin", ToolEnv.builtin(), page_size)]
    if catalog_file is not None:
        from mcp_servers.toolenv.catalog import read_catalog

        started = time.perf_counter()
        catalog = read_catalog(catalog_file)
        loaded = time.perf_counter() - started
        seen = {record.id for record in builtin_records()}
        env = ToolEnv([*builtin_records(), *(r for r in catalog.records if r.id not in seen)])
        listing = await _listing("full", env, page_size)
        listings.append(
            {
                **listing,
                "catalog_read_s": round(loaded, 2),
                "env_build_s": round(
                    time.perf_counter() - started - loaded - listing["seconds"], 2
                ),
            }
        )
    return {
        "calls_per_s": {
            "in_process": await _in_process(),
            "stdio": await _over_mcp("stdio"),
            "http": await _over_mcp("http"),
        },
        "listing": listings,
    }


def table(report: dict[str, Any]) -> str:
    """The report as a plain-text table."""
    lines = [f"{'calls/s':<12}" + "".join(f"{'c=' + str(c):>12}" for c in CONCURRENCY)]
    for path, rates in report["calls_per_s"].items():
        lines.append(f"{path:<12}" + "".join(f"{rates[str(c)]:>12,.1f}" for c in CONCURRENCY))
    lines.append("")
    lines.append(f"{'listing':<10}{'tools':>8}{'pages':>7}{'seconds':>9}{'tools/s':>10}")
    for row in report["listing"]:
        lines.append(
            f"{row['catalog']:<10}{row['tools']:>8}{row['pages']:>7}{row['seconds']:>9.2f}{row['tools_per_s']:>10,.0f}"
        )
    return "\n".join(lines)


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--catalog-file", type=Path, help="also list a built catalog file (catalog-*.jsonl.gz)"
    )
    parser.add_argument("--page-size", type=int, default=500, help="tools per tools/list page")
    parser.add_argument("--json", help="also write the JSON report to this file")
    args = parser.parse_args()
    report = asyncio.run(run(args.catalog_file, args.page_size))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(table(report))


if __name__ == "__main__":
    main()

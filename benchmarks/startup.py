"""CLI start-up benchmark: wall time of ``paraagent --help`` and friends beside bare Python.

How long does a user wait for ``paraagent --help``, ``paraagent run --help`` and ``paraagent
serve --help``? Run ``python -m benchmarks.startup`` (``--runs N``, default 5). Each command is
run N times as a fresh process (the installed console script next to this interpreter), in
interleaved rounds together with ``python -c pass``, so a busy machine slows every command
alike; the report is each command's median wall time and its ratio to ``python -c pass``
(target: ``paraagent --help`` <= 0.3 s).

It also times what a host sees when it spawns ``paraagent serve`` (no flags: the built-in
ToolEnv) with the MCP SDK's own stdio client: seconds from spawn until ``initialize`` and until
the first ``tools/list`` are answered (target: under 1 s), beside the same client spawning a bare
MCP SDK server (one tool, nothing else), in interleaved rounds. The server's CPU seconds until
its ``tools/list`` answer (from ``/proc``) are reported too: unlike wall time they hardly move
when other work shares the machine. Prints one JSON object, then tables.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

PARAAGENT = Path(sys.executable).with_name("paraagent")
TARGET_S = 0.3
COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "paraagent --help": [str(PARAAGENT), "--help"],
    "paraagent run --help": [str(PARAAGENT), "run", "--help"],
    "paraagent serve --help": [str(PARAAGENT), "serve", "--help"],
}


def _wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        command,
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    return time.perf_counter() - started


SERVERS: dict[str, list[str]] = {
    # -P: this folder's mcp.py must not shadow the SDK.
    "bare MCP SDK server": [sys.executable, "-P", str(Path(__file__).resolve()), "--bare-server"],
    "paraagent serve": [str(PARAAGENT), "serve"],
}
SERVE_TARGET_S = 1.0
# Runs the server as itself after writing its pid to the file given first.
_WITH_PID = ["/bin/sh", "-c", 'echo $$ > "$0"; exec "$@"']


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process so far."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _first_listing(command: list[str], folder: str) -> dict[str, float]:
    """Spawn ``command`` with the MCP SDK's stdio client; time its handshake and tool list."""
    from mcp import Client, StdioServerParameters, stdio_client

    pid_file = Path(folder) / "server.pid"
    pid_file.unlink(missing_ok=True)
    server = StdioServerParameters(
        command=_WITH_PID[0],
        args=[*_WITH_PID[1:], str(pid_file), *command],
        cwd=folder,  # no ./.mcp.json here: serve uses the built-in ToolEnv
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    with open(os.devnull, "w") as quiet:
        started = time.perf_counter()
        async with Client(stdio_client(server, errlog=quiet), mode="legacy") as client:
            initialized = time.perf_counter() - started
            await client.list_tools()
            listed = time.perf_counter() - started
            cpu = _cpu_s(int(pid_file.read_text()))
    return {"initialize_s": initialized, "tools_list_s": listed, "server_cpu_s": cpu}


def first_listing(*, runs: int = 5) -> dict[str, Any]:
    """Time a host's first ``tools/list`` of each of :data:`SERVERS`, in interleaved rounds."""
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in SERVERS}
    with tempfile.TemporaryDirectory() as folder:
        for command in SERVERS.values():  # warm-up: the first run fills the OS cache
            asyncio.run(_first_listing(command, folder))
        for _ in range(runs):
            for name, command in SERVERS.items():
                samples[name].append(asyncio.run(_first_listing(command, folder)))
    python = statistics.median(_wall(COMMANDS["python -c pass"]) for _ in range(runs))
    report: dict[str, Any] = {"runs": runs, "target_s": SERVE_TARGET_S, "python_c_pass_s": python}
    bare = samples["bare MCP SDK server"]
    for name, rows in samples.items():
        medians = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        report[name] = {
            **medians,
            "max_tools_list_s": max(row["tools_list_s"] for row in rows),
            "tools_list_over_python": medians["tools_list_s"] / python,
            "tools_list_over_bare_sdk": medians["tools_list_s"]
            / statistics.median(row["tools_list_s"] for row in bare),
            "cpu_over_bare_sdk": medians["server_cpu_s"]
            / statistics.median(row["server_cpu_s"] for row in bare),
        }
    return report


def _bare_server() -> None:
    """The baseline: an MCP SDK server with one tool, over stdio."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bare")

    @server.tool()
    def ping() -> str:
        """Answer pong."""
        return "pong"

    server.run("stdio")


def run_benchmark(*, runs: int = 5) -> dict[str, Any]:
    """Time every command ``runs`` times in interleaved rounds; return the JSON-ready report."""
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # one warm-up each: the first run fills the OS cache
        _wall(command)
    for _ in range(runs):
        for name, command in COMMANDS.items():
            walls[name].append(_wall(command))
    baseline = statistics.median(walls["python -c pass"])
    return {
        "benchmark": "startup",
        "python": platform.python_version(),
        "runs": runs,
        "target_s": TARGET_S,
        "load_average": list(os.getloadavg()),
        "commands": {
            name: {
                "median_s": statistics.median(times),
                "min_s": min(times),
                "max_s": max(times),
                "over_python": statistics.median(times) / baseline,
            }
            for name, times in walls.items()
        },
    }


def _print_table(report: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"start-up, median of {report['runs']} runs (target <= {report['target_s']} s)"
    )
    for column in ("command", "median s", "min s", "max s", "× python -c pass"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for name, row in report["commands"].items():
        table.add_row(
            name,
            f"{row['median_s']:.3f}",
            f"{row['min_s']:.3f}",
            f"{row['max_s']:.3f}",
            f"{row['over_python']:.1f}",
        )
    console.print(table)


def _print_serve_table(report: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"a host spawns the server over stdio, median of {report['runs']} "
        f"(target: tools/list <= {report['target_s']} s)"
    )
    for column in (
        "server",
        "initialize s",
        "tools/list s",
        "max s",
        "server CPU s",
        "× python -c pass",
        "× bare SDK (wall)",
        "× bare SDK (CPU)",
    ):
        table.add_column(column, justify="left" if column == "server" else "right")
    for name in SERVERS:
        row = report[name]
        table.add_row(
            name,
            f"{row['initialize_s']:.3f}",
            f"{row['tools_list_s']:.3f}",
            f"{row['max_tools_list_s']:.3f}",
            f"{row['server_cpu_s']:.2f}",
            f"{row['tools_list_over_python']:.1f}",
            f"{row['tools_list_over_bare_sdk']:.2f}",
            f"{row['cpu_over_bare_sdk']:.2f}",
        )
    console.print(table)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, run the benchmark, print JSON then a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (default 5)")
    parser.add_argument("--bare-server", action="store_true", help="be the baseline MCP server")
    args = parser.parse_args(argv)
    if args.bare_server:
        _bare_server()
        return
    report = run_benchmark(runs=args.runs)
    report["serve_first_listing"] = first_listing(runs=args.runs)
    print(json.dumps(report, indent=2))
    _print_table(report, Console())
    _print_serve_table(report["serve_first_listing"], Console())


if __name__ == "__main__":
    main()

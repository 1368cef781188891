"""``python -m mcp_servers.toolenv``: serve the built-in ToolEnv over MCP stdio."""

from __future__ import annotations

import argparse
import logging

import anyio

from .server import build_server
from .simulator import LatencyModel
from .source import ToolEnv


def main(argv: list[str] | None = None) -> None:
    """Parse options and serve the built-in catalog on stdin/stdout until the client disconnects."""
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.toolenv", description=__doc__)
    parser.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    parser.add_argument(
        "--failure-rate", type=float, default=0.0, help="injected failure probability per call"
    )
    parser.add_argument(
        "--latency", type=float, default=0.0, help="mean simulated latency per call in seconds"
    )
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    latency = (
        LatencyModel(base_s=options.latency, jitter_s=options.latency)
        if options.latency > 0
        else None
    )
    env = ToolEnv.builtin(seed=options.seed, failure_rate=options.failure_rate, latency=latency)
    anyio.run(build_server(env).run_stdio_async)


if __name__ == "__main__":
    main()

"""Shared pieces of the MCP benchmarks: a free loopback port and a connected client source."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from paraagent_runtime import MCPConnectionError
from paraagent_runtime.mcp import MCPServerConfig, MCPToolSource

__all__ = ["connected_source", "free_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def connected_source(
    name: str,
    config: MCPServerConfig,
    *,
    server: subprocess.Popen[bytes] | None = None,
    attempts: int = 400,
) -> AsyncIterator[MCPToolSource]:
    """Connect a client source, retrying while an HTTP ``server`` process starts.

    On exit the source is closed and the server process (if any) terminated.
    """
    source = MCPToolSource(name, config)
    try:
        for _ in range(attempts):
            try:
                await source.connect()
                break
            except MCPConnectionError:  # the HTTP server is still starting
                await asyncio.sleep(0.05)
        yield source
    finally:
        await source.aclose()
        if server is not None:
            server.terminate()
            server.wait(10)

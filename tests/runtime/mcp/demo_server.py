"""A small MCP server the tests run as a real stdio child (``python demo_server.py``).

Tools: ``echo``, ``add``, ``pid``, ``getenv`` and ``sleep``; ``sleep`` appends ``cancelled`` to
the file named by ``DEMO_MARKER`` when the client cancels it.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer

server = MCPServer("demo")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable in the server process ('' when unset)."""
    return os.environ.get(name, "")


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, recording a cancellation in the marker file."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        marker = os.environ.get("DEMO_MARKER")
        if marker:
            with Path(marker).open("a") as handle:
                handle.write("cancelled\n")
        raise
    return "slept"


if __name__ == "__main__":
    server.run("stdio")

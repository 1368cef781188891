"""The toolspace over the servers of an MCP config file."""

from __future__ import annotations

from pathlib import Path

from ..search import ToolSearch
from ..toolspace import Toolspace
from .source import load_mcp_sources

__all__ = ["mcp_toolspace"]


def mcp_toolspace(
    path: str | Path, *, search: ToolSearch | None = None, preload_threshold: int = 32
) -> Toolspace:
    """A toolspace over the enabled servers of an MCP config file.

    A server's ``tools/list_changed`` refreshes the toolspace (and so its search index). Call
    ``await toolspace.refresh()`` before the first use.

    Raises:
        ConfigError: The file cannot be used (the message names the field).
    """
    holder: list[Toolspace] = []

    async def refresh(_source: str) -> None:
        await holder[0].refresh()

    toolspace = Toolspace(
        load_mcp_sources(path, on_tools_changed=refresh),
        search=search,
        preload_threshold=preload_threshold,
    )
    holder.append(toolspace)
    return toolspace

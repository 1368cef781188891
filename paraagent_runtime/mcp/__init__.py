"""MCP integration: client tool sources over the ``mcp`` SDK 2.x, and paraagent's own MCP server."""

from __future__ import annotations

from .config import MCPConfig, MCPServerConfig, expand_variables, load_mcp_config, parse_mcp_config
from .source import (
    ConnectionState,
    ElicitationRequest,
    ElicitationResponse,
    MCPTimeoutError,
    MCPToolSource,
    ProgressUpdate,
    ReconnectPolicy,
    load_mcp_sources,
)
from .toolspace import mcp_toolspace

__all__ = [
    "ConnectionState",
    "ElicitationRequest",
    "ElicitationResponse",
    "MCPConfig",
    "MCPServerConfig",
    "MCPTimeoutError",
    "MCPToolSource",
    "ProgressUpdate",
    "ReconnectPolicy",
    "expand_variables",
    "load_mcp_config",
    "load_mcp_sources",
    "mcp_toolspace",
    "parse_mcp_config",
]

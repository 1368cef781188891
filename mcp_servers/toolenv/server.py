"""ToolEnv's MCP face: every catalog tool, with its real JSON Schemas, on an ``MCPServer``.

``MCPServer`` derives schemas from Python signatures; ToolEnv's tools come with explicit schemas
(and there may be 50k of them), so :class:`ToolEnvMCPServer` overrides the server's two public
tool hooks, ``list_tools`` and ``call_tool``, instead of registering one function per tool. Tool
names are the model-facing names (``weather__get_forecast``).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent
from mcp_types import Tool as MCPTool
from mcp_types import ToolAnnotations as MCPToolAnnotations

from .errors import ToolEnvError
from .records import ToolRecord
from .source import ToolEnv

__all__ = ["ToolEnvMCPServer", "build_server"]

logger = logging.getLogger(__name__)


def _mcp_tool(record: ToolRecord, name: str) -> MCPTool:
    hints = record.annotations
    return MCPTool(
        name=name,
        title=hints.title,
        description=record.description,
        input_schema=record.input_schema,
        output_schema=record.output_schema
        if (record.output_schema or {}).get("type") == "object"
        else None,
        annotations=MCPToolAnnotations(
            title=hints.title,
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
            open_world_hint=hints.open_world,
        ),
    )


class ToolEnvMCPServer(MCPServer):
    """An ``MCPServer`` serving a :class:`ToolEnv` catalog through its simulator.

    Args:
        env: The environment to expose.
        name: The server name announced to clients.
    """

    def __init__(self, env: ToolEnv, *, name: str = "toolenv") -> None:
        super().__init__(
            name=name,
            instructions="Simulated real-world APIs (ToolEnv). Tool names are <provider>__<tool>.",
        )
        self.env = env
        specs = {record.id: record.to_spec().name for record in env.records}
        self._by_name: dict[str, ToolRecord] = {specs[record.id]: record for record in env.records}
        self._tools = [_mcp_tool(record, name) for name, record in self._by_name.items()]

    async def list_tools(self) -> list[MCPTool]:
        """Every catalog tool with its explicit input and output schemas."""
        return list(self._tools)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Answer a call through the simulator; ToolEnv errors become ``is_error`` results.

        Raises:
            MCPError: ``name`` is not a tool of this server (``INVALID_PARAMS``).
        """
        record = self._by_name.get(name)
        if record is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        try:
            result = await self.env.simulator.call(record.provider, record.name, arguments or {})
        except ToolEnvError as exc:
            logger.info("toolenv tool %s failed: %s", name, type(exc).__name__)
            return CallToolResult(
                content=[TextContent(type="text", text=f"{type(exc).__name__}: {exc}")],
                is_error=True,
            )
        text = json.dumps(result, ensure_ascii=False)
        structured = result if isinstance(result, dict) else {"result": result}
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured
        )


def build_server(env: ToolEnv | None = None, *, name: str = "toolenv") -> ToolEnvMCPServer:
    """An MCP server over ``env`` (default: the built-in catalog, seed 0)."""
    return ToolEnvMCPServer(env if env is not None else ToolEnv.builtin(), name=name)

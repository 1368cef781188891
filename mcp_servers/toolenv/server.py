"""ToolEnv's MCP face: every catalog tool, with its real JSON Schemas, on an ``MCPServer``.

``MCPServer`` derives schemas from Python signatures; ToolEnv's tools come with explicit schemas
(and there may be 50k of them), so :class:`ToolEnvMCPServer` overrides the server's tool hooks
(``list_tools``, ``call_tool`` and the ``tools/list`` request handler, for paging) instead of
registering one function per tool. Tool names are the model-facing names
(``weather__get_forecast``).

Two faces:

- *plain* (default): every catalog tool, listed in pages of ``page_size`` tools (the cursor is
  the offset of the next page); MCP tool objects are built per page, so a 65k-tool catalog
  starts without converting every schema;
- *gateway*: two tools only, ``search_tools(query, top_k)`` (keyword search over the catalog,
  returns compact cards) and ``call_tool(name, arguments)`` (calls any catalog tool), for
  clients that cannot hold a huge tool list.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)
from mcp_types import Tool as MCPTool
from mcp_types import ToolAnnotations as MCPToolAnnotations

from paraagent_runtime import SEARCH_TOOLS, model_facing_name
from paraagent_runtime.keyword_search import KeywordToolSearch

from .errors import ToolEnvError
from .records import ToolRecord
from .serve import DEFAULT_PAGE_SIZE
from .source import ToolEnv

__all__ = ["GATEWAY_TOOLS", "ToolEnvMCPServer", "build_server"]

logger = logging.getLogger(__name__)

CALL = "call_tool"
_GATEWAY_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    SEARCH_TOOLS: (
        (
            "Search the ToolEnv catalog by what a tool does; returns tool cards (name, "
            "description, parameters)."
        ),
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    CALL: (
        f"Call a catalog tool by its name (from {SEARCH_TOOLS}) with its arguments.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "arguments": {"type": "object"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
    ),
}
GATEWAY_TOOLS: tuple[str, ...] = tuple(_GATEWAY_SCHEMAS)


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


def _text_result(value: Any) -> CallToolResult:
    structured = value if isinstance(value, dict) else {"result": value}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(value, ensure_ascii=False))],
        structured_content=structured,
    )


class ToolEnvMCPServer(MCPServer):
    """An ``MCPServer`` serving a :class:`ToolEnv` catalog through its simulator.

    Args:
        env: The environment to expose.
        name: The server name announced to clients.
        page_size: Tools per ``tools/list`` page (plain face).
        gateway: Serve the gateway face (``search_tools`` + ``call_tool``) instead of every tool.

    Raises:
        ValueError: ``page_size`` is below 1.
    """

    def __init__(
        self,
        env: ToolEnv,
        *,
        name: str = "toolenv",
        page_size: int = DEFAULT_PAGE_SIZE,
        gateway: bool = False,
    ) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, got {page_size}")
        super().__init__(
            name=name,
            instructions="Simulated real-world APIs (ToolEnv). Tool names are <provider>__<tool>."
            + (" Find tools with search_tools, call them with call_tool." if gateway else ""),
        )
        self.env = env
        self.page_size = page_size
        self.gateway = gateway
        self._by_name: dict[str, ToolRecord] = {
            model_facing_name(record.id): record for record in env.records
        }
        self._names = list(self._by_name)
        self._tools: dict[str, MCPTool] = {}
        self._search: KeywordToolSearch | None = None

    def _tool(self, name: str) -> MCPTool:
        tool = self._tools.get(name)
        if tool is None:
            tool = self._tools[name] = _mcp_tool(self._by_name[name], name)
        return tool

    def _gateway_tools(self) -> list[MCPTool]:
        return [
            MCPTool(name=name, description=description, input_schema=schema)
            for name, (description, schema) in _GATEWAY_SCHEMAS.items()
        ]

    async def list_tools(self) -> list[MCPTool]:
        """Every tool this face serves (all catalog tools, or the two gateway tools)."""
        if self.gateway:
            return self._gateway_tools()
        return [self._tool(name) for name in self._names]

    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        """One ``tools/list`` page; the cursor is the decimal offset of the page.

        Raises:
            MCPError: an invalid cursor (``INVALID_PARAMS``).
        """
        if self.gateway:
            return ListToolsResult(tools=self._gateway_tools())
        cursor = params.cursor if params is not None else None
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            start = -1
        if not 0 <= start <= len(self._names):
            raise MCPError(code=INVALID_PARAMS, message=f"invalid tools/list cursor {cursor!r}")
        end = start + self.page_size
        page = [self._tool(name) for name in self._names[start:end]]
        return ListToolsResult(tools=page, next_cursor=str(end) if end < len(self._names) else None)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Validate and answer a call through the simulator; ToolEnv errors become ``is_error``.

        Arguments are checked with the runtime's validator (what the runtime does before it
        dispatches); an invalid call is a ``ToolEnvArgumentError`` result.

        Raises:
            MCPError: ``name`` is not a tool of this face (``INVALID_PARAMS``).
        """
        arguments = arguments or {}
        if self.gateway:
            if name == SEARCH_TOOLS:
                return await self._gateway_search(arguments)
            if name == CALL:
                target = arguments.get("name")
                inner = arguments.get("arguments") or {}
                if not isinstance(target, str) or not isinstance(inner, dict):
                    raise MCPError(
                        code=INVALID_PARAMS,
                        message="call_tool needs a string name and an arguments object",
                    )
                return await self._call_catalog_tool(target, inner)
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Unknown tool: {name} (the gateway serves {', '.join(GATEWAY_TOOLS)})",
            )
        return await self._call_catalog_tool(name, arguments)

    async def _call_catalog_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        record = self._by_name.get(name)
        if record is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        try:
            self.env.simulator.validate(record.id, arguments)
            result = await self.env.simulator.call(record.provider, record.name, arguments)
        except ToolEnvError as exc:
            logger.info("toolenv tool %s failed: %s", name, type(exc).__name__)
            return CallToolResult(
                content=[TextContent(type="text", text=f"{type(exc).__name__}: {exc}")],
                is_error=True,
            )
        return _text_result(result)

    async def _gateway_search(self, arguments: dict[str, Any]) -> CallToolResult:
        query, top_k = arguments.get("query"), arguments.get("top_k", 5)
        if (
            not isinstance(query, str)
            or not query.strip()
            or not isinstance(top_k, int)
            or not 1 <= top_k <= 50
        ):
            raise MCPError(
                code=INVALID_PARAMS,
                message="search_tools needs a non-empty query and 1 <= top_k <= 50",
            )
        if self._search is None:
            search = KeywordToolSearch()
            await search.update([record.to_spec() for record in self._by_name.values()])
            self._search = search
        hits = await self._search.search(query, top_k=top_k)
        cards = [
            self._by_name[model_facing_name(identifier)].to_spec().card() for identifier, _ in hits
        ]
        return _text_result({"tools": cards})


def build_server(
    env: ToolEnv | None = None,
    *,
    name: str = "toolenv",
    page_size: int = DEFAULT_PAGE_SIZE,
    gateway: bool = False,
) -> ToolEnvMCPServer:
    """An MCP server over ``env`` (default: the built-in catalog, seed 0)."""
    return ToolEnvMCPServer(
        env if env is not None else ToolEnv.builtin(),
        name=name,
        page_size=page_size,
        gateway=gateway,
    )

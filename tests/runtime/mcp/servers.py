"""In-process MCP servers the tests connect to (real SDK servers, no doubles)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel


class Contact(BaseModel):
    """The form a tool elicits."""

    email: str


def build_demo_server(events: list[str]) -> MCPServer:
    """A server with annotated, structured, slow, failing, progress and eliciting tools.

    ``events`` receives what the server observed (e.g. ``"sleep cancelled"``).
    """
    server = MCPServer("demo")

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=True, title="Delete it"))
    def delete(path: str) -> str:
        """Pretend to delete a file."""
        return f"deleted {path}"

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    def upsert(key: str) -> str:
        """Pretend to upsert a key."""
        return key

    @server.tool(structured_output=False)
    def plain(text: str) -> str:
        """Return unstructured text."""
        return text

    @server.tool(structured_output=False)
    def as_json() -> str:
        """Return a JSON document as text content."""
        return '{"k": [1, 2]}'

    @server.tool()
    def fail(reason: str) -> str:
        """Always fail with ``reason``."""
        raise ToolError(reason)

    @server.tool()
    async def sleep(seconds: float, ctx: Context) -> str:
        """Report progress, then sleep (recording a cancellation)."""
        await ctx.report_progress(0.5, 1.0, "half way")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            events.append("sleep cancelled")
            raise
        return "slept"

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool and announce the change (both protocol eras)."""
        server.add_tool(lambda: "new", name="fresh", description="A tool added at run time.")
        await ctx.notify_tools_changed()
        if ctx.protocol_version not in ("2026-07-28",):
            await ctx.session.send_tool_list_changed()
        return "grown"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Elicit an email address."""
        answer = await ctx.elicit("Which email?", Contact)
        data = getattr(answer, "data", None)
        return f"{answer.action}:{data.email if data else ''}"

    return server


def build_raw_server(
    *,
    tools: list[types.Tool],
    result: dict[str, Any] | types.CallToolResult,
    page_size: int | None = None,
) -> Server[Any]:
    """A low-level server that lists ``tools`` (paged) and answers every call with ``result``.

    ``result`` may be anything, so tests can make a server return schema-invalid content.
    """

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if page_size is None:
            return types.ListToolsResult(tools=tools)
        start = int(params.cursor) if params and params.cursor else 0
        end = start + page_size
        cursor = str(end) if end < len(tools) else None
        return types.ListToolsResult(tools=tools[start:end], next_cursor=cursor)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        return result

    return Server("raw", on_list_tools=list_tools, on_call_tool=call_tool)

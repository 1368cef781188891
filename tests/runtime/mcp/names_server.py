"""An MCP server the tests run as a real stdio child, with the names and schemas hosts meet.

Tools: ``math.factorial`` and ``scale`` (their parameters in a function-calling dialect: ``int``,
``dict``, ``float``, ``tuple``, ``any``; MCP itself insists on a top-level ``object``),
``get-tiny-image``, ``a/b``, ``get_current_time`` (also a tool of ``mcp-server-time``) and
``broken`` (a schema no normalizer can fix). Every call answers ``{"tool": name, "arguments":
arguments}``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(
        name="math.factorial",
        description="n! of a non-negative integer.",
        input_schema={"type": "object", "properties": {"n": {"type": "int"}}, "required": ["n"]},
    ),
    types.Tool(
        name="scale",
        description="Scale a point by a factor.",
        input_schema={
            "type": "object",
            "properties": {
                "factor": {"type": "float"},
                "options": {"type": "dict", "properties": {"round": {"type": "bool"}}},
                "point": {"type": "tuple", "items": [{"type": "float"}, {"type": "float"}]},
                "label": {"type": "any"},
            },
            "required": ["factor", "point"],
        },
    ),
    types.Tool(name="get-tiny-image", description="A tiny image.", input_schema=EMPTY),
    types.Tool(name="a/b", description="A slashed name.", input_schema=EMPTY),
    types.Tool(name="get_current_time", description="The time, here.", input_schema=EMPTY),
    types.Tool(
        name="broken",
        description="A tool whose schema names a type JSON Schema does not have.",
        input_schema={"type": "object", "properties": {"when": {"type": "date"}}},
    ),
]


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    """Every tool, in one page."""
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    """Answer with the tool's name and the arguments it received (and n! for the factorial)."""
    arguments = params.arguments or {}
    answer: dict[str, Any] = {"tool": params.name, "arguments": arguments}
    if params.name == "math.factorial":
        answer["value"] = math.factorial(arguments["n"])
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(answer))],
        structured_content=answer,
    )


server = Server("names", on_list_tools=list_tools, on_call_tool=call_tool)

if __name__ == "__main__":
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)

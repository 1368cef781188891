"""The explore-phase meta-tools ``search_tools`` and ``inspect_tool``, served by the runtime.

Both load the tools they reveal into the episode's
:class:`~paraagent_runtime.toolspace.ToolSession`, which makes those tools callable in later
execute turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import UnknownToolError
from .tools import ToolAnnotations, ToolSpec

if TYPE_CHECKING:
    from .toolspace import ToolSession, Toolspace

__all__ = ["INSPECT_TOOL", "META_TOOL_SPECS", "SEARCH_TOOLS", "meta_tool_spec", "run_meta_tool"]

SEARCH_TOOLS = "search_tools"
"""The meta-tool that searches the toolspace and loads the tools it returns."""
INSPECT_TOOL = "inspect_tool"
"""The meta-tool that shows one tool's full schema and loads it."""
MAX_TOP_K = 20

_META_ANNOTATIONS = ToolAnnotations(read_only=True, idempotent=True, open_world=False)

META_TOOL_SPECS: list[ToolSpec] = [
    ToolSpec(
        id=SEARCH_TOOLS,
        description=(
            "Search the tool catalog with a short natural-language query. Returns compact tool "
            "cards (name, description, parameter names; '?' marks optional ones) and makes the "
            "found tools callable."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What the tool should do.",
                },
                "top_k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TOP_K,
                    "default": 5,
                    "description": "How many tools to return.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=_META_ANNOTATIONS,
        category="meta",
    ),
    ToolSpec(
        id=INSPECT_TOOL,
        description=(
            "Show the full JSON Schema of one tool by its exact name, and make it callable."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "The tool name."}
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        annotations=_META_ANNOTATIONS,
        category="meta",
    ),
]

_SPECS_BY_NAME = {spec.name: spec for spec in META_TOOL_SPECS}


def meta_tool_spec(name: str) -> ToolSpec | None:
    """Return the spec of the meta-tool called ``name``, or None when it is not a meta-tool."""
    return _SPECS_BY_NAME.get(name)


async def _search_tools(
    arguments: dict[str, Any], toolspace: Toolspace, session: ToolSession
) -> list[dict[str, Any]]:
    found = await toolspace.search(arguments["query"], top_k=int(arguments.get("top_k", 5)))
    session.load(spec.name for spec in found)
    return [spec.card() for spec in found]


async def _inspect_tool(
    arguments: dict[str, Any], toolspace: Toolspace, session: ToolSession
) -> dict[str, Any]:
    name = arguments["name"]
    spec = toolspace.get(name) or meta_tool_spec(name)
    if spec is None:
        raise UnknownToolError(toolspace.unknown_tool_message(name))
    session.load([name])
    return spec.schema_view()


_HANDLERS = {SEARCH_TOOLS: _search_tools, INSPECT_TOOL: _inspect_tool}


async def run_meta_tool(
    name: str, arguments: dict[str, Any], *, toolspace: Toolspace, session: ToolSession
) -> Any:
    """Execute the meta-tool ``name`` with already validated ``arguments``.

    Raises:
        UnknownToolError: ``name`` is not a meta-tool, or ``inspect_tool`` was asked for a tool
            the toolspace does not know (the message suggests close names).
    """
    handler = _HANDLERS.get(name)
    if handler is None:
        raise UnknownToolError(f"{name!r} is not a meta-tool")
    return await handler(arguments, toolspace, session)

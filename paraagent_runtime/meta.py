"""The explore-phase meta-tools ``search_tools`` and ``inspect_tool``, served by the runtime.

They are a tool source like any other, opened per episode (:class:`MetaToolSource`): both load
the tools they reveal into the episode's :class:`~paraagent_runtime.toolspace.ToolSession`, which
makes those tools callable in later execute turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import UnknownToolError
from .tools import ToolAnnotations, ToolSpec

if TYPE_CHECKING:
    from .toolspace import ToolSession

__all__ = ["INSPECT_TOOL", "META_TOOLS", "META_TOOL_SPECS", "SEARCH_TOOLS", "MetaToolSource"]

SEARCH_TOOLS = "search_tools"
"""The meta-tool that searches the toolspace and loads the tools it returns."""
INSPECT_TOOL = "inspect_tool"
"""The meta-tool that shows one tool's full schema and loads it."""
META_TOOLS: frozenset[str] = frozenset({SEARCH_TOOLS, INSPECT_TOOL})
"""The explore-phase tool names of the grammar (phase inference reads them)."""
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


class MetaToolSource:
    """``search_tools`` and ``inspect_tool`` for one episode, as a tool source.

    :meth:`Toolspace.new_session <paraagent_runtime.toolspace.Toolspace.new_session>` opens one
    per session; the session shows its tools always (they need no loading), and what they reveal
    is loaded into that session. The source's ``name`` is empty: the meta-tools' ids carry no
    source part, so their model-facing names are the bare names of the grammar.

    Args:
        session: The episode's session; its toolspace is searched and inspected.
    """

    name = ""

    def __init__(self, session: ToolSession) -> None:
        self.session = session

    async def list_tools(self) -> list[ToolSpec]:
        """The two meta-tools."""
        return list(META_TOOL_SPECS)

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Run a meta-tool with validated ``arguments``.

        Raises:
            UnknownToolError: ``tool`` is not a meta-tool, or ``inspect_tool`` was asked for a
                tool the session does not know (the message suggests close names).
        """
        if tool == SEARCH_TOOLS:
            return await self._search(arguments)
        if tool == INSPECT_TOOL:
            return await self._inspect(arguments)
        raise UnknownToolError(f"{tool!r} is not a meta-tool")

    async def aclose(self) -> None:
        """Nothing to release."""

    async def _search(self, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        found = await self.session.toolspace.search_answers(
            arguments["query"], top_k=int(arguments.get("top_k", 5))
        )
        self.session.load(spec.name for spec, _ in found)
        return [{**spec.card(), "answers": part} if part else spec.card() for spec, part in found]

    async def _inspect(self, arguments: dict[str, Any]) -> dict[str, Any]:
        name = arguments["name"]
        spec = self.session.get(name)
        if spec is None:
            raise UnknownToolError(self.session.unknown_tool_message(name))
        self.session.load([name])
        return spec.schema_view()

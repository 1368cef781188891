"""The system prompt that teaches a policy the ParaAct grammar, per agent mode."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .modes import DEFAULT_MODE, AgentMode
from .tools import ToolSpec

__all__ = ["system_prompt"]

_GRAMMAR = """\
You solve the user's task with tools. Each of your turns is either tool calls or a final answer.

To call tools, write one <tool_call> block per call, each holding JSON with "name" and "arguments":
<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>
The results come back as <tool_response name="..." id="..."> blocks, one per call, in order.
When you know the answer, write it for the user: <answer>...</answer>"""

_SEARCH = """\
Tools you have not loaded yet can be found with the meta-tools:
- search_tools(query, top_k=5): find tools for a need; returns compact cards and loads them.
- inspect_tool(name): the full schema of one tool; loads it.
Only loaded tools can be called."""

_ALL_LOADED = """\
Every tool there is is already loaded (listed below): call them directly, there is nothing to
search for."""

_MODE_RULES: dict[AgentMode, str] = {
    "paraact": """\
Work in phases. Start every tool turn with <phase>explore</phase> (only search_tools /
inspect_tool calls) or <phase>execute</phase> (calls of loaded tools). You may switch phases as
often as needed. Put all calls that do not depend on each other in the SAME turn (up to {k_max});
they run in parallel. Only wait for a result when the next call needs it.""",
    "react": """\
Make exactly ONE tool call per turn, then wait for its result. Do not write <phase> tags.""",
    "decoupled": """\
First explore: search and inspect until you have every tool you need. Then execute:
call the loaded tools. Once you execute, you cannot search any more. Start every tool turn with
<phase>explore</phase> or <phase>execute</phase>; up to {k_max} independent calls per turn.""",
}


_EXECUTE_ONLY_RULES: dict[AgentMode, str] = {
    "paraact": """\
Start every tool turn with <phase>execute</phase>. Put all calls that do not depend on each other
in the SAME turn (up to {k_max}); they run in parallel. Only wait for a result when the next call
needs it.""",
    "react": _MODE_RULES["react"],
    "decoupled": """\
Start every tool turn with <phase>execute</phase>; up to {k_max} independent calls per turn.""",
}


def system_prompt(
    *,
    mode: AgentMode = DEFAULT_MODE,
    preloaded: Sequence[ToolSpec] = (),
    all_loaded: bool = False,
    max_calls_per_turn: int = 8,
    extra: str = "",
) -> str:
    """Build the system prompt for ``mode``; ``preloaded`` tools are listed with their schemas.

    Args:
        mode: The agent mode whose rules the prompt states.
        preloaded: The tools loaded from the start, listed with their schemas.
        all_loaded: ``preloaded`` is every tool there is: the prompt says so and does not send
            the model searching (no explore phase).
        max_calls_per_turn: The most calls one turn may make.
        extra: Text appended to the prompt.
    """
    rules = _EXECUTE_ONLY_RULES if all_loaded else _MODE_RULES
    parts = [
        _GRAMMAR,
        _ALL_LOADED if all_loaded else _SEARCH,
        rules[mode].format(k_max=max_calls_per_turn),
    ]
    if preloaded:
        listing = "\n".join(
            json.dumps(spec.schema_view(), ensure_ascii=False) for spec in preloaded
        )
        parts.append(f"These tools are already loaded:\n{listing}")
    if extra:
        parts.append(extra)
    return "\n\n".join(parts)

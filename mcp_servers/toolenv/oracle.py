"""The oracle policy: a scripted upper bound that solves a task from its gold call DAG.

The oracle reads the conversation so far (its own earlier turns and their observations) and
decides the next turn, so it needs no hidden state and survives errors:

1. explore: one ``search_tools`` call per gold tool not yet surfaced (all in one parallel turn);
   a gold tool the search did not surface is loaded with ``inspect_tool`` in a second turn;
2. execute: one turn per level of the gold DAG, every ready node in parallel, arguments bound
   from the *observed* outputs of earlier levels (``GoldCall.bindings``);
3. answer: the task's facts, read from the observed outputs.

In ``react`` mode every turn carries one call (the mode's limit), so the same plan takes one turn
per call; ``decoupled`` is the ``paraact`` plan (the oracle never needs to explore again).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from paraagent_runtime import (
    DEFAULT_MODE,
    INSPECT_TOOL,
    MODES,
    SEARCH_TOOLS,
    AgentMode,
    ConfigError,
    Message,
    Task,
    model_facing_name,
    resolve_binding,
    resolve_path,
)
from paraagent_runtime.actions import parse_observations, parse_turn
from paraagent_runtime.policy import ScriptedPolicy

from .builtin import builtin_records
from .records import ToolRecord

__all__ = ["OracleScript", "oracle_policy", "search_query"]


def search_query(record: ToolRecord) -> str:
    """The query the oracle searches a gold tool with: its words and first description sentence."""
    summary = record.description.split(". ")[0].rstrip(".")
    return f"{record.name.replace('_', ' ')}: {summary}"


@dataclass
class _History:
    """What the conversation shows: loaded tools, searched tools, and successful call outputs."""

    loaded: set[str] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)
    inspected: set[str] = field(default_factory=set)
    calls: list[tuple[str, dict[str, Any], Any, bool]] = field(default_factory=list)


def _read_history(messages: Sequence[Message]) -> _History:
    history = _History()
    assistant: list[Message] = [m for m in messages if m.role == "assistant"]
    tool: list[Message] = [m for m in messages if m.role == "tool"]
    for turn_message, tool_message in zip(assistant, tool, strict=False):
        turn = parse_turn(turn_message.content)
        # Observations come back in call order, one per call.
        observations = [obs.content for obs in parse_observations(tool_message.content)]
        for call, content in zip(turn.calls, observations, strict=False):
            ok = not (isinstance(content, dict) and set(content) == {"error"})
            if call.name == SEARCH_TOOLS:
                history.searched.add(str(call.arguments.get("query")))
                if ok and isinstance(content, list):
                    history.loaded.update(
                        card.get("name", "") for card in content if isinstance(card, dict)
                    )
            elif call.name == INSPECT_TOOL:
                history.inspected.add(str(call.arguments.get("name")))
                if ok and isinstance(content, dict):
                    history.loaded.add(str(content.get("name", "")))
            else:
                history.calls.append((call.name, call.arguments, content, ok))
    return history


def _tool_call(name: str, arguments: dict[str, Any]) -> str:
    return (
        "<tool_call>"
        + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        + "</tool_call>"
    )


def _format_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else str(value)
    return str(value)


class OracleScript:
    """The oracle's turn function for one task and mode (plug into :class:`ScriptedPolicy`).

    Args:
        task: The task whose gold DAG the oracle follows.
        mode: ``paraact``, ``react`` or ``decoupled``.
        records: Records of the task's tools (default: the built-in catalog), for search queries.

    Raises:
        ConfigError: An unknown mode, or a gold tool missing from ``records``.
    """

    def __init__(
        self,
        task: Task,
        mode: AgentMode = DEFAULT_MODE,
        *,
        records: Sequence[ToolRecord] | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(
                f"oracle: unknown agent mode {mode!r} (use one of {', '.join(MODES)})"
            )
        by_id = {
            record.id: record for record in (records if records is not None else builtin_records())
        }
        missing = [tool for tool in task.tools if tool not in by_id]
        if missing:
            raise ConfigError(
                f"oracle: task {task.id} uses tools missing from the catalog: {missing}"
            )
        self.task = task
        self.mode = mode
        self._names = {tool: model_facing_name(tool) for tool in task.tools}
        self._queries = {tool: search_query(by_id[tool]) for tool in task.tools}

    def __call__(self, messages: Sequence[Message]) -> str:
        """The next turn given the conversation so far."""
        history = _read_history(messages)
        unsearched = [
            tool
            for tool in self.task.tools
            if self._names[tool] not in history.loaded
            and self._queries[tool] not in history.searched
        ]
        if unsearched:
            calls = [
                _tool_call(SEARCH_TOOLS, {"query": self._queries[tool], "top_k": 5})
                for tool in unsearched
            ]
            return self._turn("explore", calls)
        uninspected = [
            self._names[tool]
            for tool in self.task.tools
            if self._names[tool] not in history.loaded
            and self._names[tool] not in history.inspected
        ]
        if uninspected:
            return self._turn(
                "explore", [_tool_call(INSPECT_TOOL, {"name": name}) for name in uninspected]
            )
        outputs, ready = self._progress(history)
        if ready:
            return self._turn("execute", [_tool_call(name, arguments) for name, arguments in ready])
        return "<answer>" + self._answer(outputs) + "</answer>"

    def _turn(self, phase: str, calls: list[str]) -> str:
        if self.mode == "react":
            return calls[0]
        return f"<phase>{phase}</phase>\n" + "\n".join(calls)

    def _progress(
        self, history: _History
    ) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
        """Observed outputs by node, and the calls of every node ready to run now."""
        outputs: dict[str, Any] = {}
        attempted: set[str] = set()
        ready: list[tuple[str, dict[str, Any]]] = []
        for level in self.task.levels():
            for node in level:
                call = next(c for c in self.task.calls if c.id == node)
                if any(dep not in outputs for dep in call.depends_on):
                    continue
                try:
                    arguments = {
                        **call.arguments,
                        **{
                            arg: resolve_binding(outputs, ref) for arg, ref in call.bindings.items()
                        },
                    }
                except (KeyError, IndexError, TypeError, ValueError):
                    continue
                name = self._names[call.tool]
                for called, called_arguments, content, ok in history.calls:
                    if called == name and called_arguments == arguments:
                        attempted.add(node)
                        if ok:
                            outputs[node] = content
                if node not in attempted:
                    ready.append((name, arguments))
        return outputs, ready

    def _answer(self, outputs: dict[str, Any]) -> str:
        parts = []
        for fact in self.task.facts:
            try:
                value = resolve_path(outputs, fact.source)
            except (KeyError, IndexError, TypeError, ValueError):
                continue
            if (
                isinstance(value, str)
                and isinstance(fact.value, str)
                and value != fact.value
                and fact.value in value
            ):
                # The fact is a slice of the field (a local time read from a timestamp).
                value = fact.value
            parts.append(f"{fact.label or 'value'}: {_format_value(value)}")
        return "; ".join(parts) + "." if parts else "I could not find the answer."


def oracle_policy(
    task: Task, mode: AgentMode = DEFAULT_MODE, *, records: Sequence[ToolRecord] | None = None
) -> ScriptedPolicy:
    """A :class:`ScriptedPolicy` that plays the :class:`OracleScript` of ``task`` in ``mode``."""
    return ScriptedPolicy(OracleScript(task, mode, records=records), model=f"oracle-{mode}")

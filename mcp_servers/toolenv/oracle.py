"""The oracle policy: a scripted upper bound that solves a task from its gold call DAG.

The oracle reads the conversation so far (its own earlier turns and their observations) and
decides the next turn, so it needs no hidden state and survives errors:

1. explore: one ``search_tools`` call per gold tool it needs and has not surfaced (in parallel,
   at most ``max_calls_per_turn`` per turn); a tool the search did not surface is loaded with
   ``inspect_tool`` in the next turn;
2. execute: one turn per level of the gold DAG, every ready node in parallel, arguments bound
   from the *observed* outputs of earlier levels (``GoldCall.bindings``);
3. answer: the task's facts, read from the observed outputs.

When a task states every need in its query, every mode explores all gold tools first, and
``decoupled`` is the ``paraact`` plan. Hidden-need tasks (:mod:`.hidden_needs`) name some needs
only in a result, and the modes part ways:

- ``paraact`` explores lazily: it loads the tools the query states, executes, and searches again
  when a result reveals a need (the revealed node becomes ready);
- ``react`` follows the same lazy plan one call per turn;
- ``decoupled`` must hold every tool before its first execute turn and may not explore after it.
  The model of what such a planner can know: the query (so the stated tools) and the loaded
  tools' output schemas, not the values a result will hold. Before executing it therefore loads
  every read-only catalog tool that takes a kind of thing those schemas name (a place, a
  currency, a person, a company: :data:`FIELD_KINDS`, :data:`PARAM_KINDS`) with
  ``inspect_tool``, one round per schema it has read, up to :data:`GUESS_HORIZON` rounds (the
  deepest chain of reveals a family has); a need its guesses miss stays unmet. It pays in loaded
  tools and explore turns instead of a second planning round, which the decoupled runtime
  refuses (exploration closes at the first execute turn).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from paraagent_runtime import (
    DEFAULT_MODE,
    INSPECT_TOOL,
    MODES,
    SEARCH_TOOLS,
    AgentMode,
    ConfigError,
    DispatchConfig,
    Message,
    Task,
    model_facing_name,
    resolve_binding,
    resolve_path,
)
from paraagent_runtime.actions import parse_observations, parse_turn
from paraagent_runtime.policy import ScriptedPolicy

from .builtin import builtin_records
from .hidden_needs import revealed_nodes
from .records import ToolRecord

__all__ = [
    "FIELD_KINDS",
    "GUESS_HORIZON",
    "PARAM_KINDS",
    "OracleScript",
    "guess_rounds",
    "oracle_policy",
    "search_query",
]

FIELD_KINDS: dict[str, str] = {
    "city": "place",
    "venue_city": "place",
    "headquarters": "place",
    "home_city": "place",
    "currency": "currency",
    "email": "person",
    "attendees": "person",
    "from": "person",
    "symbol": "company",
}
"""Output field names that name a kind of thing a later call may need."""

PARAM_KINDS: dict[str, re.Pattern[str]] = {
    "place": re.compile(r"\bcity\b", re.IGNORECASE),
    "currency": re.compile(r"currency code", re.IGNORECASE),
    "person": re.compile(r"recipient|surname|words to look for", re.IGNORECASE),
    "company": re.compile(r"ticker|company name", re.IGNORECASE),
}
"""A required parameter whose description matches takes that kind of thing."""

GUESS_HORIZON = 2
"""Rounds of guessed follow-ups a decoupled planner loads before executing."""


def search_query(record: ToolRecord) -> str:
    """The query the oracle searches a gold tool with: its words and first description sentence."""
    summary = record.description.split(". ")[0].rstrip(".")
    return f"{record.name.replace('_', ' ')}: {summary}"


def _field_names(schema: Any) -> Iterator[str]:
    if not isinstance(schema, dict):
        return
    for name, sub in (schema.get("properties") or {}).items():
        yield name
        yield from _field_names(sub)
    yield from _field_names(schema.get("items"))


def _takes(record: ToolRecord) -> set[str]:
    schema = record.input_schema or {}
    properties = schema.get("properties") or {}
    return {
        kind
        for name in schema.get("required") or ()
        for kind, pattern in PARAM_KINDS.items()
        if pattern.search(str(properties.get(name, {}).get("description", "")))
    }


def guess_rounds(
    stated: Sequence[str], records: Sequence[ToolRecord], *, horizon: int = GUESS_HORIZON
) -> list[list[str]]:
    """The tools a decoupled planner loads after ``stated``, round by round.

    Each round holds every read-only tool of ``records`` that takes a kind of thing the previous
    round's output schemas name and that no earlier round holds.
    """
    by_id = {record.id: record for record in records}
    known = set(stated)
    frontier = list(stated)
    rounds: list[list[str]] = []
    for _ in range(horizon):
        kinds = {
            FIELD_KINDS[name]
            for tool in frontier
            for name in _field_names(by_id[tool].output_schema)
            if name in FIELD_KINDS
        }
        new = [
            record.id
            for record in records
            if record.id not in known and record.annotations.read_only and _takes(record) & kinds
        ]
        if not new:
            break
        rounds.append(new)
        known.update(new)
        frontier = new
    return rounds


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
        records: Records of the catalog (default: the built-in one), for search queries and a
            decoupled planner's guesses.
        max_calls_per_turn: The most calls it puts in one turn (the dispatcher's K_max).

    Raises:
        ConfigError: An unknown mode, or a gold tool missing from ``records``.
    """

    def __init__(
        self,
        task: Task,
        mode: AgentMode = DEFAULT_MODE,
        *,
        records: Sequence[ToolRecord] | None = None,
        max_calls_per_turn: int = DispatchConfig().max_calls_per_turn,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(
                f"oracle: unknown agent mode {mode!r} (use one of {', '.join(MODES)})"
            )
        catalog = list(records if records is not None else builtin_records())
        by_id = {record.id: record for record in catalog}
        missing = [tool for tool in task.tools if tool not in by_id]
        if missing:
            raise ConfigError(
                f"oracle: task {task.id} uses tools missing from the catalog: {missing}"
            )
        self.task = task
        self.mode = mode
        self._limit = max_calls_per_turn
        self._calls = {call.id: call for call in task.calls}
        self._revealed = revealed_nodes(task)
        self._stated = list(dict.fromkeys(c.tool for c in task.calls if c.id not in self._revealed))
        self._guesses = (
            guess_rounds(self._stated, catalog) if self._revealed and mode == "decoupled" else []
        )
        tools = {*task.tools, *(tool for round_ in self._guesses for tool in round_)}
        self._names = {tool: model_facing_name(tool) for tool in tools}
        self._queries = {tool: search_query(by_id[tool]) for tool in task.tools}

    def __call__(self, messages: Sequence[Message]) -> str:
        """The next turn given the conversation so far."""
        history = _read_history(messages)
        outputs, ready = self._progress(history)
        searched, inspected = self._wanted(history, ready)
        unsearched = [
            tool
            for tool in searched
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
            for tool in (*searched, *inspected)
            if self._names[tool] not in history.loaded
            and self._names[tool] not in history.inspected
        ]
        if uninspected:
            return self._turn(
                "explore", [_tool_call(INSPECT_TOOL, {"name": name}) for name in uninspected]
            )
        runnable = [
            _tool_call(self._names[self._calls[node].tool], arguments)
            for node, arguments in ready
            if self._names[self._calls[node].tool] in history.loaded
        ]
        if runnable:
            return self._turn("execute", runnable)
        return "<answer>" + self._answer(outputs) + "</answer>"

    def _wanted(
        self, history: _History, ready: list[tuple[str, dict[str, Any]]]
    ) -> tuple[list[str], list[str]]:
        """Tools to have loaded now: found by search, and loaded by name (guesses)."""
        if not self._revealed:
            return list(self.task.tools), []
        if self.mode != "decoupled":
            revealed = [self._calls[node].tool for node, _ in ready if node in self._revealed]
            return list(dict.fromkeys([*self._stated, *revealed])), []
        guessed: list[str] = []
        held = [*self._stated]
        for round_ in self._guesses:
            if any(
                self._names[tool] not in history.loaded
                and self._names[tool] not in history.inspected
                for tool in held
            ):
                break
            guessed.extend(round_)
            held = round_
        return list(self._stated), guessed

    def _turn(self, phase: str, calls: list[str]) -> str:
        if self.mode == "react":
            return calls[0]
        return f"<phase>{phase}</phase>\n" + "\n".join(calls[: self._limit])

    def _progress(
        self, history: _History
    ) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
        """Observed outputs by node, and every node ready to run now with its arguments."""
        outputs: dict[str, Any] = {}
        attempted: set[str] = set()
        ready: list[tuple[str, dict[str, Any]]] = []
        for level in self.task.levels():
            for node in level:
                call = self._calls[node]
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
                    ready.append((node, arguments))
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

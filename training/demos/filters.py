"""Demo filters: a trajectory is kept only when it is correct, well-formed and efficient.

The checks read nothing but the trajectory's messages and the task, so they apply equally to
scripted demonstrations and to model rollouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from paraagent_runtime import META_TOOLS, Message, Task, ToolCall, check_answer, model_facing_name
from paraagent_runtime.actions import Turn, parse_turn

__all__ = [
    "FilterLimits",
    "FilterVerdict",
    "assistant_turns",
    "dependent_calls",
    "filter_trajectory",
    "irrelevant_calls",
    "tool_turn_limit",
]


@dataclass(frozen=True)
class FilterLimits:
    """The thresholds of :func:`filter_trajectory`."""

    turn_slack: int = 3
    max_irrelevant_calls: int = 1
    mode: str = "paraact"


@dataclass
class FilterVerdict:
    """The outcome of filtering one trajectory: ``reasons`` is empty when it is kept."""

    reasons: list[str] = field(default_factory=list)

    @property
    def kept(self) -> bool:
        """True when no filter rejected the trajectory."""
        return not self.reasons


def assistant_turns(messages: Sequence[Message]) -> list[Turn]:
    """Every assistant message parsed strictly, in order."""
    return [
        parse_turn(message.content, strict=True, id_prefix=f"t{index}")
        for index, message in enumerate(m for m in messages if m.role == "assistant")
    ]


def _node_of(task: Task, call: ToolCall) -> str | None:
    for node in task.calls:
        if model_facing_name(node.tool) == call.name and node.arguments == call.arguments:
            return node.id
    return None


def _ancestors(task: Task) -> dict[str, set[str]]:
    parents = {node.id: set(node.depends_on) for node in task.calls}
    closure: dict[str, set[str]] = {}
    for node in task.calls:
        seen: set[str] = set()
        stack = list(parents[node.id])
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(parents.get(current, ()))
        closure[node.id] = seen
    return closure


def dependent_calls(task: Task, turns: Sequence[Turn]) -> list[str]:
    """Calls issued in the same turn as a gold call they (transitively) depend on."""
    ancestors = _ancestors(task)
    found = []
    for index, turn in enumerate(turns):
        nodes = {node for call in turn.calls if (node := _node_of(task, call))}
        for node in nodes:
            if ancestors[node] & nodes:
                found.append(f"turn {index}: {node} depends on {sorted(ancestors[node] & nodes)}")
    return found


def irrelevant_calls(task: Task, turns: Sequence[Turn]) -> int:
    """Calls of tools outside the gold DAG (meta-tools excluded)."""
    gold = {model_facing_name(tool) for tool in task.tools}
    return sum(
        1
        for turn in turns
        for call in turn.calls
        if call.name not in META_TOOLS and call.name not in gold
    )


def tool_turn_limit(task: Task, limits: FilterLimits) -> int:
    """The most tool turns allowed: gold depth + slack (react: gold calls + tools + slack)."""
    if limits.mode == "react":
        return len(task.calls) + len(task.tools) + limits.turn_slack
    return task.depth + limits.turn_slack


def filter_trajectory(
    task: Task, messages: Sequence[Message], answer: str | None, limits: FilterLimits
) -> FilterVerdict:
    """Check one trajectory: answer, grammar, dependent calls, irrelevant calls, turn count."""
    verdict = FilterVerdict()
    turns = assistant_turns(messages)
    if answer is None or not check_answer(task, answer).success:
        verdict.reasons.append("answer_check")
    if any(not turn.valid for turn in turns) or not turns or not turns[-1].is_final:
        verdict.reasons.append("grammar")
    if limits.mode == "react" and any(
        len(turn.calls) > 1 or (turn.calls and not turn.phase_inferred) for turn in turns
    ):
        verdict.reasons.append("grammar")
    if dependent_calls(task, turns):
        verdict.reasons.append("dependent_calls")
    if irrelevant_calls(task, turns) > limits.max_irrelevant_calls:
        verdict.reasons.append("irrelevant_calls")
    if sum(1 for turn in turns if turn.calls) > tool_turn_limit(task, limits):
        verdict.reasons.append("too_many_turns")
    verdict.reasons = list(dict.fromkeys(verdict.reasons))
    return verdict

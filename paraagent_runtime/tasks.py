"""The task contract shared by ToolEnv, training and the CLI: tasks, gold DAGs, answer facts.

A :class:`Task` is a user query with its gold call DAG (:class:`GoldCall` nodes whose arguments
may be bound to fields of earlier outputs) and the facts a correct final answer states
(:class:`AnswerFact`, checked by :func:`paraagent_runtime.checker.check_answer`). Tasks are
stored as JSONL (:func:`save_tasks`, :func:`load_tasks`). Who generates them (ToolEnv's task
families) and who replays them (ToolEnv's simulator) live outside the runtime.

Groups follow StableToolBench: G1 = one tool, G2 = several tools of one category, G3 = several
categories.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError

__all__ = [
    "SPLITS",
    "TEST_SPLITS",
    "AnswerFact",
    "EpisodeMetrics",
    "GoldCall",
    "Group",
    "PinnedResponse",
    "Task",
    "load_tasks",
    "refuse_test_split",
    "resolve_binding",
    "resolve_path",
    "save_tasks",
]

Group = Literal["G1", "G2", "G3"]
"""StableToolBench group: one tool, several tools of one category, several categories."""

SPLITS: tuple[str, ...] = (
    "train",
    "dev",
    "test-seen",
    "test-unseen-tools",
    "test-unseen-categories",
)
"""The splits a task's ``split`` names; other labels count as seen, like ``train``.

``train`` feeds demonstrations, SFT and RL; ``dev`` is for every choice (checkpoints, rewards,
hyper-parameters); the ``test-*`` splits are touched only to report.
"""

TEST_SPLITS: tuple[str, ...] = tuple(split for split in SPLITS if split.startswith("test-"))
"""The report-only splits: no training config and no model selection may use them."""


def refuse_test_split(split: str, *, owner: str) -> None:
    """Raise :class:`ConfigError` when ``split`` is a test split, for training and selection.

    Args:
        split: The split a training or selection step asks for.
        owner: Who asks (a config field or a flag), named in the error.
    """
    if split in TEST_SPLITS:
        raise ConfigError(
            f"{owner}: split {split!r} is a test split, kept for reporting only; "
            "train on 'train' and choose on 'dev'"
        )


class GoldCall(BaseModel):
    """One node of a gold DAG.

    Attributes:
        id: Node id (``n1``…), unique in the task.
        tool: Tool id (``provider/name``).
        arguments: The concrete arguments, bound values included.
        depends_on: Nodes whose outputs this call needs.
        bindings: Argument name → ``"<node>.<path>"`` it was taken from.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    bindings: dict[str, str] = Field(default_factory=dict)


class AnswerFact(BaseModel):
    """A value a correct final answer must state.

    Attributes:
        value: The expected string or number.
        label: What the value is (for humans and reports).
        source: ``"<node>.<path>"`` the value was read from in the gold outputs.
        tolerance: Absolute tolerance for numbers (``None``: the checker's default).
    """

    model_config = ConfigDict(frozen=True)

    value: str | float
    label: str = ""
    source: str = ""
    tolerance: float | None = None


class PinnedResponse(BaseModel):
    """A response a task fixes for one exact call (tool id plus arguments, defaults filled in)."""

    model_config = ConfigDict(frozen=True)

    tool: str = Field(description="Tool id, e.g. 'weather/get_forecast'.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    response: Any = None


class Task(BaseModel):
    """A user query with its gold call DAG and verifiable answer facts.

    Attributes:
        id: Unique task id.
        query: What the user asks.
        group: StableToolBench group of the gold DAG.
        family: The task family that generated it.
        seed: The world seed the gold outputs were computed in.
        split: Split label (see :data:`SPLITS`).
        calls: The gold call DAG.
        facts: What a correct answer states.
        gold_answer: A reference answer text.
        pinned: Responses the task fixes for exact calls.
    """

    id: str
    query: str
    group: Group
    family: str
    seed: int
    split: str = "train"
    calls: list[GoldCall]
    facts: list[AnswerFact]
    gold_answer: str
    pinned: list[PinnedResponse] = Field(default_factory=list)

    @property
    def tools(self) -> list[str]:
        """Distinct tool ids of the gold DAG in first-use order."""
        return list(dict.fromkeys(call.tool for call in self.calls))

    def levels(self) -> list[list[str]]:
        """The DAG as parallel levels: calls in one level depend only on earlier levels."""
        level: dict[str, int] = {}
        for call in self.calls:
            level[call.id] = 1 + max((level[d] for d in call.depends_on), default=-1)
        out: list[list[str]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
        for call in self.calls:
            out[level[call.id]].append(call.id)
        return out

    @property
    def depth(self) -> int:
        """Length of the longest dependency chain (the critical path, in calls)."""
        return len(self.levels())

    @property
    def width(self) -> int:
        """The most calls that can run in one parallel turn."""
        return max((len(level) for level in self.levels()), default=0)


class EpisodeMetrics(BaseModel):
    """The numbers of one episode on one task: what evaluations report and training reads back.

    ``execute_turns`` is the episode's critical path in tool turns, ``gold_depth`` the fewest
    such turns that can solve the task; ``sim_wall_s`` is the simulated wall-clock (model time
    plus the slowest call of each turn); ``recall`` the share of gold tools the episode surfaced;
    ``loaded_tools`` how many tools the episode loaded (every tool when the toolspace preloads).
    """

    task_id: str
    family: str
    group: str
    mode: str
    status: str
    success: bool
    score: float
    turns: int
    explore_turns: int
    execute_turns: int
    tool_calls: int
    execute_calls: int
    gold_calls: int
    gold_depth: int
    llm_s: float
    sim_tools_s: float
    sim_wall_s: float
    recall: float
    format_error_turns: int = 0
    loaded_tools: int = 0

    @property
    def calls_per_execute_turn(self) -> float:
        """Mean non-meta calls per execute turn (0 when there was none)."""
        return self.execute_calls / self.execute_turns if self.execute_turns else 0.0


def resolve_path(outputs: dict[str, Any], reference: str) -> Any:
    """Read ``"<node>.<key>.<index>…"`` from gold outputs (integers index lists).

    Raises:
        KeyError: The path does not exist in the outputs.
    """
    node, _, path = reference.partition(".")
    value = outputs[node]
    for part in path.split(".") if path else ():
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def resolve_binding(outputs: dict[str, Any], reference: str) -> Any:
    """Resolve a binding: a :func:`resolve_path` reference, or ``"[ref]"`` for a one-item list."""
    if reference.startswith("[") and reference.endswith("]"):
        return [resolve_path(outputs, reference[1:-1])]
    return resolve_path(outputs, reference)


def save_tasks(tasks: Iterable[Task], path: str | Path) -> None:
    """Write tasks as JSONL, one task per line."""
    with Path(path).open("w", encoding="utf-8") as handle:
        for task in tasks:
            handle.write(task.model_dump_json() + "\n")


def load_tasks(path: str | Path) -> list[Task]:
    """Read tasks from JSONL (blank lines are skipped).

    Raises:
        ConfigError: The file is missing or a line is not a valid task (the message names the line).
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"task file {str(file)!r} does not exist")
    tasks = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            tasks.append(Task.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConfigError(f"{file}:{number}: not a valid task ({first})") from exc
    return tasks

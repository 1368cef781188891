"""Evaluate policies on ToolEnv tasks with the runtime's agent loop (same loop as serving and RL).

A small, dependency-free harness for training runs: base model vs. adapter on held-out tasks,
reporting success (ToolEnv checker), turns, calls and calls per execute turn.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from mcp_servers.toolenv import Task, ToolEnv, check_answer
from paraagent_runtime.agent import Agent, AgentConfig
from paraagent_runtime.concurrency import map_in_order
from paraagent_runtime.policy.base import Policy, SamplingParams
from paraagent_runtime.toolspace import Toolspace
from paraagent_runtime.trajectory import Episode, TrajectoryWriter

__all__ = [
    "SUMMARY_COLUMNS",
    "EvalRow",
    "EvalSummary",
    "evaluate_policy",
    "summaries_markdown",
    "summarize_rows",
    "summary_cells",
]


class EvalRow(BaseModel):
    """One task's outcome."""

    task_id: str
    group: str
    success: bool
    status: str
    turns: int
    calls: int
    execute_turns: int
    execute_calls: int
    format_errors: int


class EvalSummary(BaseModel):
    """Aggregates over a task set."""

    model: str
    tasks: int
    success_rate: float
    mean_turns: float
    mean_calls: float
    calls_per_execute_turn: float
    format_error_turns: int
    answered: int


def _row(task: Task, episode: Episode) -> EvalRow:
    execute = [turn for turn in episode.turns if turn.calls and turn.phase == "execute"]
    return EvalRow(
        task_id=task.id,
        group=task.group,
        success=check_answer(task, episode.answer or "").success
        if episode.status == "answered"
        else False,
        status=episode.status,
        turns=len(episode.turns),
        calls=episode.n_calls,
        execute_turns=len(execute),
        execute_calls=sum(len(turn.calls) for turn in execute),
        format_errors=sum(1 for turn in episode.turns if turn.format_errors),
    )


def summarize_rows(model: str, rows: Sequence[EvalRow]) -> EvalSummary:
    """Aggregate rows into a summary."""
    executes = sum(row.execute_turns for row in rows)
    execute_calls = sum(row.execute_calls for row in rows)

    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 3) if values else 0.0

    return EvalSummary(
        model=model,
        tasks=len(rows),
        success_rate=mean([float(row.success) for row in rows]),
        mean_turns=mean([row.turns for row in rows]),
        mean_calls=mean([row.calls for row in rows]),
        calls_per_execute_turn=round(execute_calls / executes, 3) if executes else 0.0,
        format_error_turns=sum(row.format_errors for row in rows),
        answered=sum(1 for row in rows if row.status == "answered"),
    )


async def evaluate_policy(
    policy: Policy,
    tasks: Sequence[Task],
    *,
    model: str,
    mode: str = "paraact",
    max_turns: int = 8,
    max_tokens: int = 256,
    trajectory: TrajectoryWriter | None = None,
    on_row: Callable[[EvalRow], Any] | None = None,
    concurrency: int = 1,
) -> tuple[EvalSummary, list[EvalRow]]:
    """Run ``policy`` on every task (greedy decoding) in the task's ToolEnv world.

    ``concurrency`` episodes run at once (a local model batches their turns); rows and
    ``on_row`` stay in task order, while each episode is written to ``trajectory`` as it
    finishes (whole lines, from the one event loop).

    Returns:
        The summary and one row per task.

    Raises:
        ConfigError: ``concurrency`` is below 1.
    """
    config = AgentConfig(
        mode=mode,  # type: ignore[arg-type]
        max_turns=max_turns,
        sampling=SamplingParams(max_tokens=max_tokens, temperature=0.0),
    )
    env = ToolEnv.builtin()

    async def run_task(task: Task) -> tuple[Task, Episode]:
        toolspace = Toolspace(env.for_task(task).sources)
        await toolspace.refresh()
        try:
            episode = await Agent(policy, toolspace, config, trajectory=trajectory).run(
                task.query, task_id=task.id, metadata={"model": model}
            )
        finally:
            await toolspace.aclose()
        return task, episode

    rows = []
    async for task, episode in map_in_order(run_task, tasks, concurrency=concurrency):
        row = _row(task, episode)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return summarize_rows(model, rows), rows


SUMMARY_COLUMNS = (
    "model", "split", "tasks", "success", "answered", "turns", "calls",
    "calls/execute turn", "format-error turns",
)  # fmt: skip
"""Headers of :func:`summary_cells`."""


def summary_cells(row: Mapping[str, Any]) -> list[str]:
    """One evaluation summary (``EvalSummary`` fields plus ``split``) as table cells."""
    return [
        str(row["model"]), str(row.get("split", "-")), str(row["tasks"]),
        f"{row['success_rate']:.2f}", str(row["answered"]), f"{row['mean_turns']:.2f}",
        f"{row['mean_calls']:.2f}", f"{row['calls_per_execute_turn']:.2f}",
        str(row["format_error_turns"]),
    ]  # fmt: skip


def summaries_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """A markdown table of evaluation summaries, one row per :func:`summary_cells`."""
    lines = [
        "| " + " | ".join(SUMMARY_COLUMNS) + " |",
        "|" + "---|" * len(SUMMARY_COLUMNS),
        *("| " + " | ".join(summary_cells(row)) + " |" for row in results),
    ]
    return "\n".join(lines) + "\n"

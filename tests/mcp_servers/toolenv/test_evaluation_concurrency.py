"""evaluate_toolenv with concurrent episodes: same rows, progress and trajectories in task order."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mcp_servers.toolenv import generate_tasks
from mcp_servers.toolenv.evaluation import EvalConfig, evaluate_toolenv
from mcp_servers.toolenv.oracle import oracle_policy
from paraagent_runtime import EpisodeMetrics
from paraagent_runtime.cli.eval_toolenv import eval_toolenv_command
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.modes import AgentMode
from paraagent_runtime.policy.base import Completion, Message
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.tasks import Task
from paraagent_runtime.trajectory import read_episodes

TASKS = generate_tasks(5, seed=4, split="test-seen")


def _oracles(events: list[str], chained: int):  # noqa: ANN202 - a PolicyFactory
    """Oracle policies that record each episode's start and answer.

    The first ``chained`` tasks answer only after the next task has answered, so with enough
    concurrency the episodes finish out of task order.
    """
    answered = {task.id: asyncio.Event() for task in TASKS}

    def factory(task: Task, mode: AgentMode) -> ScriptedPolicy:
        events.append(f"start {task.id}")
        oracle = oracle_policy(task, mode)
        index = [t.id for t in TASKS].index(task.id)

        async def turn(messages: Sequence[Message]) -> Completion:
            completion = await oracle.complete(messages)
            if "<answer>" in completion.text:
                if index < chained:
                    await answered[TASKS[index + 1].id].wait()
                events.append(f"answer {task.id}")
                answered[task.id].set()
            return completion

        return ScriptedPolicy(turn)

    return factory


async def _run(
    tmp_path: Path, concurrency: int, chained: int = 0
) -> tuple[list[EpisodeMetrics], list[str]]:
    events: list[str] = []
    config = EvalConfig(
        modes=["paraact"], n=len(TASKS), llm_turn_s=1.0, out=tmp_path, concurrency=concurrency
    )
    report = await evaluate_toolenv(
        config,
        _oracles(events, chained),
        tasks=TASKS,
        on_episode=lambda metrics: events.append(f"end {metrics.task_id}"),
    )
    written = list(read_episodes(tmp_path / "trajectories-paraact.jsonl", strict=True))
    assert [episode.task_id for episode in written] == [task.id for task in TASKS]
    return report.episodes, events


async def test_concurrent_episodes_give_the_sequential_rows_in_task_order(tmp_path: Path) -> None:
    sequential, sequential_events = await _run(tmp_path / "one", 1)
    concurrent, concurrent_events = await _run(tmp_path / "three", 3, chained=2)
    assert [row.model_dump() for row in concurrent] == [row.model_dump() for row in sequential]
    assert [row.task_id for row in concurrent] == [task.id for task in TASKS]
    assert all(row.success for row in concurrent)
    # One at a time: each episode ends before the next starts.
    assert sequential_events[:3] == [
        f"start {TASKS[0].id}",
        f"answer {TASKS[0].id}",
        f"end {TASKS[0].id}",
    ]
    # Three at a time: the third task answers first, yet progress is reported in task order.
    answers = [event for event in concurrent_events if event.startswith("answer")]
    assert answers[:3] == [f"answer {task.id}" for task in reversed(TASKS[:3])]
    ends = [event for event in concurrent_events if event.startswith("end")]
    assert ends == [f"end {task.id}" for task in TASKS]


def test_concurrency_below_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="--concurrency: must be >= 1, got 0"):
        EvalConfig(concurrency=0)


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(eval_toolenv_command)
    return app


def test_cli_concurrency_option(tmp_path: Path) -> None:
    args = ["--mode", "paraact", "--n-tasks", "3", "--llm-turn-s", "0.5", "--out", str(tmp_path)]
    result = CliRunner().invoke(_cli(), [*args, "--concurrency", "3"])
    assert result.exit_code == 0, result.output
    assert "| paraact | 100.0 [43.9, 100.0] |" in result.output
    written = list(read_episodes(tmp_path / "trajectories-paraact.jsonl", strict=True))
    assert [episode.task_id for episode in written] == [
        task.id for task in generate_tasks(3, seed=0, split="test-seen")
    ]
    bad = CliRunner().invoke(_cli(), [*args, "--concurrency", "0"])
    assert bad.exit_code == 2 and "--concurrency" in bad.output

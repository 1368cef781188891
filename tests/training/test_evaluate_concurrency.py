"""evaluate_policy with concurrent episodes: rows in task order whatever order episodes end in."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.policy.base import Message
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.trajectory import TrajectoryWriter, read_episodes
from training.evaluate import evaluate_policy

TASKS = generate_tasks(4, seed=1)


def _answers_out_of_order() -> ScriptedPolicy:
    """Answers each task with its id; the first task waits until the second has answered."""
    second_answered = asyncio.Event()

    async def turn(messages: Sequence[Message]) -> str:
        index = next(
            i for i, task in enumerate(TASKS) if any(task.query in m.content for m in messages)
        )
        if index == 0:
            await second_answered.wait()
        elif index == 1:
            second_answered.set()
        return f"<answer>{TASKS[index].id}</answer>"

    return ScriptedPolicy(turn)


async def test_rows_keep_task_order_and_every_episode_is_written(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    seen: list[str] = []
    with TrajectoryWriter(path) as writer:
        summary, rows = await evaluate_policy(
            _answers_out_of_order(),
            TASKS,
            model="scripted",
            trajectory=writer,
            on_row=lambda row: seen.append(row.task_id),
            concurrency=3,
        )
    assert [row.task_id for row in rows] == seen == [task.id for task in TASKS]
    assert summary.tasks == summary.answered == len(TASKS)
    episodes = list(read_episodes(path, strict=True))
    assert {episode.task_id for episode in episodes} == {task.id for task in TASKS}
    assert all(episode.answer == episode.task_id for episode in episodes)
    # The first task finished last, yet the file keeps task order too.
    assert [e.task_id for e in episodes] == [task.id for task in TASKS]


async def test_concurrency_below_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="concurrency"):
        await evaluate_policy(ScriptedPolicy([]), TASKS, model="x", concurrency=0)

"""Splits keep their promise: no dev or test task asks or answers what a train task does.

Train is compared at the sizes training uses (every ``training/configs/*.yaml`` that generates
tasks) and the held-out splits at the evaluation size (``DEFAULT_EVAL_TASKS``, 60).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml

from mcp_servers.toolenv.tasks import (
    SPLIT_BUCKETS,
    generate_tasks,
    key_bucket,
    task_key,
)
from paraagent_runtime.intervals import DEFAULT_EVAL_TASKS
from paraagent_runtime.tasks import SPLITS, Task

CONFIGS = Path(__file__).resolve().parents[3] / "training" / "configs"
HELD_OUT = [split for split in SPLITS if split != "train"]
EVAL_N = max(DEFAULT_EVAL_TASKS, 60)
FAST_TRAIN_LIMIT = 1000


def _train_draws() -> dict[tuple[int, tuple[str, ...] | None], int]:
    """(task seed, families) → the most train tasks any config generates with them."""
    draws: dict[tuple[int, tuple[str, ...] | None], int] = {}
    for path in sorted(CONFIGS.glob("*.yaml")):
        config = yaml.safe_load(path.read_text()) or {}
        if "n_tasks" not in config or config.get("tasks_file"):
            continue
        rl = any(key.startswith("task_") for key in config) or "steps" in config
        seed = config.get("task_seed", 0) if rl else config.get("seed", 0)
        split = config.get("task_split" if rl else "split", "train")
        families = config.get("task_families" if rl else "families")
        assert split == "train", f"{path.name} generates {split!r} tasks"
        key = (seed, tuple(families) if families else None)
        draws[key] = max(draws.get(key, 0), int(config["n_tasks"]))
    return draws


@cache
def _train(limit: int | None) -> tuple[Task, ...]:
    tasks: list[Task] = []
    for (seed, families), n in _train_draws().items():
        size = n if limit is None else min(n, limit)
        tasks += generate_tasks(size, seed=seed, split="train", families=families)
    return tuple(tasks)


def _text(text: str) -> str:
    return " ".join(text.lower().split())


def _assert_disjoint(train: tuple[Task, ...], split: str) -> None:
    held = generate_tasks(EVAL_N, seed=0, split=split)
    assert len(held) >= 60
    queries = {_text(task.query) for task in train}
    answers = {_text(task.gold_answer) for task in train}
    keys = {task_key(task) for task in train}
    for task in held:
        assert _text(task.query) not in queries, task.id
        assert _text(task.gold_answer) not in answers, task.id
        assert task_key(task) not in keys, task.id


def test_configs_generate_train_tasks_at_the_sizes_compared() -> None:
    sizes = sorted(_train_draws().values())
    assert sizes and sizes[-1] >= 900


@pytest.mark.parametrize("split", HELD_OUT)
def test_no_held_out_query_or_answer_equals_a_train_one(split: str) -> None:
    _assert_disjoint(_train(FAST_TRAIN_LIMIT), split)


@pytest.mark.slow
@pytest.mark.parametrize("split", HELD_OUT)
def test_no_held_out_query_or_answer_equals_a_train_one_at_full_config_sizes(split: str) -> None:
    _assert_disjoint(_train(None), split)


def test_seen_splits_own_disjoint_key_buckets() -> None:
    owned = [set(buckets) for buckets in SPLIT_BUCKETS.values()]
    assert set().union(*owned) == set(range(20)) and sum(map(len, owned)) == 20
    for split, buckets in SPLIT_BUCKETS.items():
        assert all(key_bucket(task_key(t)) in buckets for t in generate_tasks(24, split=split))


def test_a_pair_asked_the_other_way_round_is_the_same_task() -> None:
    task = generate_tasks(1, seed=0, split="dev", families=["city_pair_facts"])[0]
    distance, difference = task.calls
    swapped = task.model_copy(
        update={
            "calls": [
                distance.model_copy(
                    update={
                        "arguments": {
                            "origin": distance.arguments["destination"],
                            "destination": distance.arguments["origin"],
                        }
                    }
                ),
                difference.model_copy(
                    update={
                        "arguments": {
                            "city": difference.arguments["other_city"],
                            "other_city": difference.arguments["city"],
                        }
                    }
                ),
            ]
        }
    )
    assert task_key(swapped) == task_key(task)


def test_each_split_has_its_own_seeds() -> None:
    seeds = {split: {t.seed for t in generate_tasks(24, split=split)} for split in SPLITS}
    for first in SPLITS:
        for second in SPLITS:
            if first < second:
                assert not seeds[first] & seeds[second], (first, second)

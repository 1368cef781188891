from __future__ import annotations

import pytest

from paraagent_runtime import TEST_SPLITS, EpisodeMetrics
from paraagent_runtime.errors import ConfigError
from training.experiments.heldout import (
    HELDOUT,
    DepthScore,
    Heldout,
    HeldoutScore,
    format_paired,
    heldout_tasks,
    paired_difference,
)
from training.rl import RLConfig


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"tasks": 0}, "tasks >= 1"),
        ({"tasks": 2, "samples": 0, "temperature": 1.0}, "samples >= 1"),
        ({"tasks": 2, "temperature": -1.0}, "temperature >= 0"),
        ({"tasks": 2, "samples": 3}, "need a temperature"),
    ],
)
def test_heldout_spec_rejects_bad_values(values: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Heldout(**values)


def _row(task_id: str, success: bool) -> EpisodeMetrics:
    return EpisodeMetrics.model_validate(
        {name: 0 for name in EpisodeMetrics.model_fields}
        | {"task_id": task_id, "family": "f", "group": "G1", "mode": "paraact"}
        | {"status": "answered", "success": success}
    )


def test_heldout_score_keeps_the_success_rate_of_each_task() -> None:
    rows = [_row("a", True), _row("a", False), _row("b", True), _row("b", True)]
    rows[1] = rows[1].model_copy(update={"format_error_turns": 2})
    score = HeldoutScore.from_rows(rows)
    assert score.success == 0.75 and score.per_task == {"a": 0.5, "b": 1.0}
    assert score.format_errors == 0.5


def test_heldout_score_keeps_the_share_of_gold_facts_stated_per_task() -> None:
    shares = {("a", True): 1.0, ("a", False): 0.5, ("b", False): 0.25, ("b", True): 0.0}
    rows = [
        _row(task, success).model_copy(update={"score": share})
        for (task, success), share in shares.items()
    ]
    score = HeldoutScore.from_rows(rows)
    assert score.facts == pytest.approx(0.4375)
    assert score.facts_per_task == {"a": 0.75, "b": 0.125}
    assert score.per_task == {"a": 0.5, "b": 0.5}


def test_heldout_score_splits_success_and_parallel_calls_by_gold_depth() -> None:
    def row(task_id: str, depth: int, success: bool, calls: int, turns: int) -> EpisodeMetrics:
        return _row(task_id, success).model_copy(
            update={"gold_depth": depth, "execute_calls": calls, "execute_turns": turns}
        )

    rows = [row("a", 1, True, 2, 1), row("a", 1, False, 2, 2), row("b", 2, False, 3, 1)]
    rows.append(row("b", 2, True, 2, 2))
    score = HeldoutScore.from_rows(rows)
    assert score.by_depth == {
        1: DepthScore(episodes=2, success=0.5, calls_per_execute_turn=4 / 3),
        2: DepthScore(episodes=2, success=0.5, calls_per_execute_turn=5 / 3),
    }
    # No execute turn at all: zero calls per turn, not a division by zero.
    assert HeldoutScore.from_rows([row("c", 1, False, 0, 0)]).by_depth == {
        1: DepthScore(episodes=1, success=0.0, calls_per_execute_turn=0.0)
    }


def test_paired_difference_is_a_seeded_paired_bootstrap_over_the_tasks() -> None:
    start = {"a": 0.5, "b": 0.25, "c": 1.0}
    final = {"a": 0.75, "b": 0.75, "c": 1.0}  # differences 0.25, 0.5, 0
    paired = paired_difference([final], start)
    assert paired is not None and paired.n == 3
    assert paired.estimate == pytest.approx(0.25)
    # Every resampled mean of {0.25, 0.5, 0} lies in [0, 0.5]; the interval is strictly inside
    # the extremes' span only at its ends.
    assert 0.0 <= paired.low < paired.estimate < paired.high <= 0.5
    assert paired_difference([dict(reversed(final.items()))], start) == paired  # seeded, by task
    assert format_paired(paired) == "+0.250 [+0.000, +0.500]"
    # Two seeds: each task's final rate is their mean (0.5, 0.5, 1.0: differences 0, 0.25, 0).
    other = {"a": 0.25, "b": 0.25, "c": 1.0}
    both = paired_difference([final, other], start)
    assert both is not None and both.estimate == pytest.approx(0.25 / 3)
    for finals, begin in (([final], None), ([None], start), ([{"a": 1.0}], start), ([], start)):
        assert paired_difference(finals, begin) is None
    assert paired_difference([{"a": 1.0}], {"a": 0.0}) is None  # one task has no spread
    assert format_paired(None) == "-"


def test_runs_are_compared_on_dev_never_on_a_test_split() -> None:
    assert HELDOUT == "dev" and HELDOUT not in TEST_SPLITS
    tasks = heldout_tasks(RLConfig(task_families=("stock_compare",)), 3)
    assert {task.split for task in tasks} == {"dev"}
    assert {task.family for task in tasks} == {"stock_compare"}

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image

from mcp_servers.toolenv import generate_tasks
from mcp_servers.toolenv.evaluation import EpisodeMetrics
from paraagent_runtime.errors import ConfigError
from training.rl import RLConfig
from training.rl.ablation import (
    AblationRun,
    DepthScore,
    Heldout,
    HeldoutScore,
    _start_heldout,
    ablation_table,
    depth_table,
    heldout_scores,
    paired_difference,
    plot_ablation,
    run_ablation,
)

from .helpers import rl_config as _config


def _run(estimator: str, seed: int, reward: float) -> AblationRun:
    return AblationRun(
        estimator=estimator,
        seed=seed,
        steps=3,
        episodes=12,
        final_reward=reward,
        final_success=reward / 2,
        zero_variance_groups=0.5,
        wall_s=2.0,
        curves={"reward/trajectory_mean": [0.0, reward], "success": [0.0, reward / 2]},
    )


def test_table_has_one_row_per_estimator_with_mean_and_std_over_seeds() -> None:
    runs = [_run("grpo", 0, 0.2), _run("grpo", 1, 0.4), _run("multilevel", 0, 0.5)]
    lines = ablation_table(runs).splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| grpo | 0,1 | 3 | 24 | 0.300 ± 0.141")
    assert lines[3].startswith("| multilevel | 0 | 3 | 12 | 0.500 |")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"seeds": ()}, "seed"), ({"estimators": ()}, "estimator"), ({"window": 0}, "window")],
)
def test_bad_ablation_arguments_raise(tmp_path: Path, kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        run_ablation(RLConfig(output_dir=tmp_path), output_dir=tmp_path, **kwargs)


def test_cli_reports_a_bad_config_with_status_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from training.rl.cli import rl_app

    config = tmp_path / "rl.yaml"
    config.write_text("group_size: 1\n")
    args = ["ablation", "--config", str(config), "--output-dir", str(tmp_path)]
    result = CliRunner().invoke(rl_app, args)
    assert result.exit_code == 2 and "group_size" in result.output
    for extra, message in (
        (["--heldout-tasks", "2", "--heldout-samples", "4"], "need a temperature"),
        (["--heldout-temperature", "1.0"], "need --heldout-tasks N"),
    ):
        result = CliRunner().invoke(rl_app, ["ablation", "--output-dir", str(tmp_path), *extra])
        assert result.exit_code == 2 and message in result.output, result.output


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


def test_heldout_plot_has_the_start_then_each_estimator_with_its_seeds(tmp_path: Path) -> None:
    runs = [_run("grpo", 0, 0.2), _run("grpo", 1, 0.4), _run("multilevel", 0, 0.5)]
    runs = [
        run.model_copy(update={"heldout": HeldoutScore(success=run.final_reward)}) for run in runs
    ]
    start = HeldoutScore(success=0.3)
    assert heldout_scores(runs, start) == {
        "start": [0.3],
        "grpo": [0.2, 0.4],
        "multilevel": [0.5],
    }
    assert heldout_scores(runs[:1]) == {"grpo": [0.2]}
    assert heldout_scores([_run("grpo", 0, 0.2)]) == {}
    # A seed without a score is left out of its bar; an estimator without any has no bar.
    partial = [runs[0], _run("grpo", 1, 0.4), _run("multilevel", 0, 0.5)]
    assert heldout_scores(partial, start) == {"start": [0.3], "grpo": [0.2]}
    spec = Heldout(tasks=12, samples=4, temperature=1.0)
    assert spec.episodes == 48 and spec.standard_error(0.25) == pytest.approx(0.0625)
    png = plot_ablation(runs, tmp_path / "a.png", start=start, heldout=spec)
    # Three panels (reward, success, held-out) are wider than the two without held-out scores.
    plain = plot_ablation([_run("grpo", 0, 0.2)], tmp_path / "b.png")
    assert Image.open(png).size[0] > Image.open(plain).size[0]


def test_table_says_how_heldout_success_was_measured() -> None:
    spec = Heldout(tasks=12, samples=4, temperature=1.0)
    start = HeldoutScore(success=0.25)
    table = ablation_table([_run("grpo", 0, 0.2)], start=start, heldout=spec)
    assert table.splitlines()[2].startswith("| start (no RL) | - | 0 | 0 | - | - | 0.250 |")
    assert "Held-out success: 12 test-seen tasks, 4 samples at T=1.0." in table
    # sqrt(0.25 * 0.75 / 48)
    assert "binomial standard error at the start's rate is 0.062." in table
    without_start = ablation_table([_run("grpo", 0, 0.2)], heldout=spec)
    assert "4 samples at T=1.0. Format errors:" in without_start


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


def test_depth_table_pools_seeds_and_marks_a_missing_depth() -> None:
    start = HeldoutScore(
        success=0.5,
        by_depth={
            1: DepthScore(episodes=4, success=0.5, calls_per_execute_turn=1.5),
            2: DepthScore(episodes=4, success=0.5, calls_per_execute_turn=1.0),
        },
    )
    seeds = [
        HeldoutScore(
            success=0.25, by_depth={1: DepthScore(episodes=4, success=s, calls_per_execute_turn=c)}
        )
        for s, c in ((0.25, 2.0), (0.75, 1.0))
    ]
    runs = [
        _run("grpo", seed, 0.1).model_copy(update={"heldout": score})
        for seed, score in enumerate(seeds)
    ]
    lines = depth_table([*runs, _run("multilevel", 0, 0.3)], start=start).splitlines()
    assert lines[0].count("success") == 2 and lines[0].count("calls/execute turn") == 2
    assert lines[2] == "| start (no RL) | 0.500 (4) | 1.50 | 0.500 (4) | 1.00 |"
    assert lines[3] == "| grpo | 0.500 (8) | 1.50 | - | - |"
    assert not any(line.startswith("| multilevel") for line in lines)  # never evaluated
    assert depth_table([_run("grpo", 0, 0.1)]) == ""


def test_paired_difference_is_the_mean_task_difference_with_its_standard_error() -> None:
    start = {"a": 0.5, "b": 0.25, "c": 1.0}
    final = {"a": 0.75, "b": 0.75, "c": 1.0}  # differences 0.25, 0.5, 0
    mean, error = paired_difference([final], start) or (None, None)
    assert mean == pytest.approx(0.25)
    assert error == pytest.approx(0.25 / 3**0.5)  # stdev 0.25 over 3 tasks
    # Two seeds: each task's final rate is their mean (0.5, 0.5, 1.0: differences 0, 0.25, 0).
    other = {"a": 0.25, "b": 0.25, "c": 1.0}
    assert paired_difference([final, other], start)[0] == pytest.approx(0.25 / 3)  # type: ignore[index]
    for finals, begin in (([final], None), ([None], start), ([{"a": 1.0}], start), ([], start)):
        assert paired_difference(finals, begin) is None
    assert paired_difference([{"a": 1.0}], {"a": 0.0}) is None  # one task has no spread


def test_table_gives_each_estimator_its_paired_difference_to_the_start() -> None:
    start = HeldoutScore(success=0.5, per_task={"a": 0.5, "b": 0.5}, format_errors=0.25)
    final = HeldoutScore(success=0.75, per_task={"a": 1.0, "b": 0.5}, format_errors=1.5)
    run = _run("grpo", 0, 0.2).model_copy(update={"heldout": final})
    table = ablation_table([run, _run("multilevel", 0, 0.3)], start=start)
    start_row, grpo, multilevel = table.splitlines()[2:5]
    assert "| 0.500 | - | 0.250 |" in start_row
    assert "| 0.750 | +0.250 ± 0.250 | 1.500 |" in grpo
    assert "| - | - | - |" in multilevel  # no held-out score, no difference, no errors


@pytest.mark.slow
def test_ablation_runs_both_estimators_with_the_same_budget(
    cold_start: Path, tmp_path: Path
) -> None:
    base = _config(
        cold_start,
        tmp_path / "unused",
        steps=2,
        save_every=2,
        tasks_file=None,
        n_tasks=2,
        task_families=["city_pair_facts"],
    )
    heldout = Heldout(tasks=1, samples=2, temperature=1.0)
    runs = run_ablation(base, output_dir=tmp_path, seeds=(0,), window=2, heldout=heldout)
    assert [r.estimator for r in runs] == ["grpo", "multilevel"]
    assert {r.episodes for r in runs} == {2 * base.tasks_per_step * base.group_size}
    assert all(r.heldout is not None and len(r.curves["success"]) == 2 for r in runs)
    for name in ("ablation.json", "ablation.md", "ablation.png"):
        assert (tmp_path / name).stat().st_size > 0
    written = json.loads((tmp_path / "ablation.json").read_text())
    assert len(written["runs"]) == 2
    tasks_id = generate_tasks(
        1, seed=base.task_seed, split="test-seen", families=["city_pair_facts"]
    )[0].id
    # The starting policy is evaluated once on the same held-out tasks, before any update.
    start = json.loads((tmp_path / "start.json").read_text())
    assert len(start["key"]["tasks"]) == 1 and start["key"]["samples"] == 2
    assert written["start_heldout_success"] == start["heldout_success"]
    # Scores keep each task's rate, so finals pair with the start task by task.
    assert list(start["per_task"]) == start["key"]["tasks"]
    assert all(
        r.heldout is not None and (r.heldout.per_task or {}).keys() == {tasks_id} for r in runs
    )
    # Every evaluation keeps its episodes (token ids included) beside its score.
    for folder in ("start", "grpo-seed0", "multilevel-seed0"):
        lines = (tmp_path / folder / "heldout.jsonl").read_text().splitlines()
        assert len(lines) == 2 and all(json.loads(line)["turns"][0]["token_ids"] for line in lines)
    assert written["heldout"] == heldout.model_dump()
    # Two sampled episodes of one task: the success rate is a multiple of 1/2.
    assert all((2 * r.heldout.success) % 1 == 0 for r in runs if r.heldout is not None)
    assert "| start (no RL) |" in (tmp_path / "ablation.md").read_text()
    # The cached start score is reused only for the same starting point and decoding.
    tasks = generate_tasks(1, seed=base.task_seed, split="test-seen", families=["city_pair_facts"])
    assert start["key"]["tasks"] == [tasks[0].id]
    # Scores split by gold-graph depth; a score cached without the split gets it from the
    # evaluation's episodes.
    assert "depth 1 success" in (tmp_path / "ablation.md").read_text()
    assert sum(d["episodes"] for d in start["by_depth"].values()) == 2
    legacy = {**start, "heldout_success": 0.5, "by_depth": None}
    (tmp_path / "start.json").write_text(json.dumps(legacy))
    upgraded = _start_heldout(base, tmp_path, tasks, heldout)
    assert upgraded.success == 0.5
    assert upgraded.by_depth == HeldoutScore(success=0.0, by_depth=start["by_depth"]).by_depth
    changed = dataclasses.replace(base, max_turns=base.max_turns + 1)
    assert _start_heldout(changed, tmp_path, tasks, heldout).success == start["heldout_success"]
    _start_heldout(base, tmp_path, tasks, Heldout(tasks=1))
    assert json.loads((tmp_path / "start.json").read_text())["key"]["temperature"] == 0.0
    # A finished run is read back: its sampled final score is cached, never re-drawn.
    again = run_ablation(base, output_dir=tmp_path, seeds=(0,), window=2, heldout=heldout)
    assert [r.final_reward for r in again] == [r.final_reward for r in runs]
    assert [r.heldout for r in again] == [r.heldout for r in runs]
    for run in ("grpo-seed0", "multilevel-seed0"):
        assert json.loads((tmp_path / run / "heldout.json").read_text())["key"]["step"] == 2

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.errors import ConfigError
from training.rl import RLConfig
from training.rl.ablation import (
    AblationRun,
    Heldout,
    _start_heldout,
    ablation_table,
    heldout_scores,
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
    runs = [run.model_copy(update={"heldout_success": run.final_reward}) for run in runs]
    assert heldout_scores(runs, 0.3) == {"start": [0.3], "grpo": [0.2, 0.4], "multilevel": [0.5]}
    assert heldout_scores(runs[:1]) == {"grpo": [0.2]}
    assert heldout_scores([_run("grpo", 0, 0.2)]) == {}
    # A seed without a score is left out of its bar; an estimator without any has no bar.
    partial = [runs[0], _run("grpo", 1, 0.4), _run("multilevel", 0, 0.5)]
    assert heldout_scores(partial, 0.3) == {"start": [0.3], "grpo": [0.2]}
    spec = Heldout(tasks=12, samples=4, temperature=1.0)
    assert spec.episodes == 48 and spec.standard_error(0.25) == pytest.approx(0.0625)
    png = plot_ablation(runs, tmp_path / "a.png", start_heldout=0.3, heldout=spec)
    # Three panels (reward, success, held-out) are wider than the two without held-out scores.
    plain = plot_ablation([_run("grpo", 0, 0.2)], tmp_path / "b.png")
    assert Image.open(png).size[0] > Image.open(plain).size[0]


def test_table_says_how_heldout_success_was_measured() -> None:
    spec = Heldout(tasks=12, samples=4, temperature=1.0)
    table = ablation_table([_run("grpo", 0, 0.2)], start_heldout=0.25, heldout=spec)
    assert table.splitlines()[2].startswith("| start (no RL) | - | 0 | 0 | - | - | 0.250 |")
    assert "Held-out success: 12 test-seen tasks, 4 samples at T=1.0." in table
    # sqrt(0.25 * 0.75 / 48)
    assert table.rstrip().endswith("binomial standard error at the start's rate is 0.062.")
    without_start = ablation_table([_run("grpo", 0, 0.2)], heldout=spec)
    assert without_start.rstrip().endswith("4 samples at T=1.0.")


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
    assert all(r.heldout_success is not None and len(r.curves["success"]) == 2 for r in runs)
    for name in ("ablation.json", "ablation.md", "ablation.png"):
        assert (tmp_path / name).stat().st_size > 0
    written = json.loads((tmp_path / "ablation.json").read_text())
    assert len(written["runs"]) == 2
    # The starting policy is evaluated once on the same held-out tasks, before any update.
    start = json.loads((tmp_path / "start.json").read_text())
    assert len(start["key"]["tasks"]) == 1 and start["key"]["samples"] == 2
    assert written["start_heldout_success"] == start["heldout_success"]
    assert written["heldout"] == heldout.model_dump()
    # Two sampled episodes of one task: the success rate is a multiple of 1/2.
    assert all((2 * r.heldout_success) % 1 == 0 for r in runs if r.heldout_success is not None)
    assert "| start (no RL) |" in (tmp_path / "ablation.md").read_text()
    # The cached start score is reused only for the same starting point and decoding.
    tasks = generate_tasks(1, seed=base.task_seed, split="test-seen", families=["city_pair_facts"])
    assert start["key"]["tasks"] == [tasks[0].id]
    (tmp_path / "start.json").write_text(json.dumps({**start, "heldout_success": 0.5}))
    assert _start_heldout(base, tmp_path, tasks, heldout) == 0.5
    changed = dataclasses.replace(base, max_turns=base.max_turns + 1)
    assert _start_heldout(changed, tmp_path, tasks, heldout) == start["heldout_success"]
    _start_heldout(base, tmp_path, tasks, Heldout(tasks=1))
    assert json.loads((tmp_path / "start.json").read_text())["key"]["temperature"] == 0.0
    # A finished run is read back: its sampled final score is cached, never re-drawn.
    again = run_ablation(base, output_dir=tmp_path, seeds=(0,), window=2, heldout=heldout)
    assert [r.final_reward for r in again] == [r.final_reward for r in runs]
    assert [r.heldout_success for r in again] == [r.heldout_success for r in runs]
    for run in ("grpo-seed0", "multilevel-seed0"):
        assert json.loads((tmp_path / run / "heldout.json").read_text())["key"]["step"] == 2

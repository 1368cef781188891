from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.errors import ConfigError
from training.experiments.ablation import _start_heldout, run_ablation
from training.experiments.heldout import HELDOUT, Heldout, HeldoutScore
from training.rl import RLConfig

from ..rl.helpers import rl_config as _config


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seeds": ()}, "seed"),
        ({"estimators": ()}, "estimator"),
        ({"window": 0}, "window"),
        ({"contrasts": [("gdpo", "grpo")]}, r"contrast arms \['gdpo'\]"),
    ],
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
        (["--keep-dir", str(config)], "is a file, not a folder"),
    ):
        result = CliRunner().invoke(rl_app, ["ablation", "--output-dir", str(tmp_path), *extra])
        assert result.exit_code == 2 and message in result.output, result.output


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
    tasks_id = generate_tasks(1, seed=base.task_seed, split=HELDOUT, families=["city_pair_facts"])[
        0
    ].id
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
    tasks = generate_tasks(1, seed=base.task_seed, split=HELDOUT, families=["city_pair_facts"])
    assert start["key"]["tasks"] == [tasks[0].id]
    # Scores split by gold-graph depth and keep the share of gold facts stated; a score cached
    # without them gets them from the evaluation's episodes.
    assert "depth 1 success" in (tmp_path / "ablation.md").read_text()
    assert sum(d["episodes"] for d in start["by_depth"].values()) == 2
    assert 0.0 <= start["facts"] <= 1.0 and list(start["facts_per_task"]) == [tasks[0].id]
    legacy = {**start, "heldout_success": 0.5, "by_depth": None}
    del legacy["facts"], legacy["facts_per_task"]
    (tmp_path / "start.json").write_text(json.dumps(legacy))
    upgraded = _start_heldout(base, tmp_path, tasks, heldout)
    assert upgraded.success == 0.5
    assert upgraded.by_depth == HeldoutScore(success=0.0, by_depth=start["by_depth"]).by_depth
    assert (upgraded.facts, upgraded.facts_per_task) == (start["facts"], start["facts_per_task"])
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


def test_arms_and_estimators_are_not_given_together(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from training.rl.cli import rl_app

    for extra, message in (
        (["--arms", "decoupling", "--estimator", "grpo"], "not both"),
        (["--arms", "nope"], "unknown set 'nope'"),
    ):
        result = CliRunner().invoke(rl_app, ["ablation", "--output-dir", str(tmp_path), *extra])
        assert result.exit_code == 2 and message in result.output, result.output


def test_decoupling_ablation_end_to_end_on_a_tiny_model(tiny_model: Path, tmp_path: Path) -> None:
    """Two arms x two seeds x one step over a stated-need and a hidden-need family, then the
    report regenerated from the run folders, and the equal-steps check on an unequal plan."""
    base = _config(
        tiny_model,
        tmp_path / "unused",
        steps=1,
        tasks_per_step=1,
        group_size=2,
        max_new_tokens=4,
        kl_coef=0.0,
        n_tasks=2,
        task_families=["multi_city_weather", "flight_packing"],
    )
    heldout = Heldout(tasks=2)
    options = dict(output_dir=tmp_path, estimators=("grpo", "gdpo"), seeds=(0, 1), window=1)
    kept = tmp_path.parent / f"{tmp_path.name}-kept"
    runs = run_ablation(base, heldout=heldout, floor="grpo", keep_dir=kept, **options)
    assert [(r.estimator, r.seed, r.steps, r.complete) for r in runs] == [
        ("grpo", 0, 1, True),
        ("grpo", 1, 1, True),
        ("gdpo", 0, 1, True),
        ("gdpo", 1, 1, True),
    ]
    written = json.loads((tmp_path / "ablation.json").read_text())
    grpo, gdpo = written["arms"]
    assert gdpo["seeds"] == [0, 1] and gdpo["vs_floor"]["n"] == 2
    assert gdpo["success"]["low"] <= gdpo["success"]["estimate"] <= gdpo["success"]["high"]
    seed_means = [r.heldout.success for r in runs if r.estimator == "gdpo" and r.heldout]
    assert gdpo["success"]["estimate"] == pytest.approx(sum(seed_means) / 2)
    assert grpo["vs_floor"] is None and set(gdpo["by_family"]) == {
        "multi_city_weather",
        "flight_packing",
    }
    table = (tmp_path / "ablation.md").read_text()
    assert table.startswith("| arm | complete seeds |") and "| gdpo | 0,1 | 1 |" in table
    assert (tmp_path / "ablation.png").stat().st_size > 0

    # Every finished run's small files were kept as it finished (JSON lines gzipped), never its
    # checkpoint.
    kept_files = sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file())
    assert kept_files == sorted(
        ["start.json", "start/heldout.jsonl.gz"]
        + [
            f"{arm}-seed{seed}/{name}"
            for arm in ("grpo", "gdpo")
            for seed in (0, 1)
            for name in ("heldout.json", "heldout.jsonl.gz", "metrics.jsonl.gz")
        ]
    )

    # Reading back regenerates the same table without training or evaluating anything, also on
    # a fresh machine that has only the kept files.
    for entry in tmp_path.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    again = run_ablation(base, heldout=heldout, floor="grpo", train=False, keep_dir=kept, **options)
    assert [r.heldout for r in again] == [r.heldout for r in runs]
    assert (tmp_path / "ablation.md").read_text() == table
    assert not (tmp_path / "grpo-seed0" / "checkpoint").exists()

    # One run extended to two steps: under a two-step plan the others stopped early; under the
    # one-step plan the extended one is off plan. Either way unequal runs are not pooled.
    longer = dataclasses.replace(base, steps=2)
    run_ablation(longer, output_dir=tmp_path, estimators=("grpo",), seeds=(0,), window=1)
    planned = run_ablation(longer, heldout=heldout, floor="grpo", train=False, **options)
    assert [r.complete for r in planned] == [True, False, False, False]
    arms = json.loads((tmp_path / "ablation.json").read_text())["arms"]
    assert arms[1]["seeds"] == [] and arms[1]["incomplete"] == [
        "seed 0: 1/2 steps",
        "seed 1: 1/2 steps",
    ]
    assert (
        "Incomplete runs, not pooled above: grpo seed 1 (1/2 steps)"
        in (tmp_path / "ablation.md").read_text()
    )
    first_plan = run_ablation(base, heldout=heldout, floor="grpo", train=False, **options)
    assert [r.complete for r in first_plan] == [False, True, True, True]

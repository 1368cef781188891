from __future__ import annotations

import json
from pathlib import Path

import pytest

from training.experiments.ablation_report import write_ablation
from training.experiments.arms import arm_results, arms_table, family_table
from training.experiments.heldout import HeldoutScore

from .helpers import ablation_run


def _scored(estimator: str, seed: int, a: float, b: float, *, steps: int = 3):
    per_task = {"t-a": a, "t-b": b}
    score = HeldoutScore(
        success=(a + b) / 2, per_task=per_task, facts=(a + b) / 2, facts_per_task=per_task
    )
    return ablation_run(estimator, seed, 0.5).model_copy(
        update={"heldout": score, "steps": steps, "target_steps": 3}
    )


def _runs() -> list:
    return [
        _scored("grpo", 0, 0.0, 1.0),
        _scored("grpo", 1, 0.0, 0.0),
        _scored("gdpo", 0, 1.0, 1.0),
        _scored("gdpo", 1, 0.0, 1.0),
        # Stopped after 2 of 3 steps: listed, never pooled (it would pull gdpo down).
        _scored("gdpo", 2, 0.0, 0.0, steps=2),
    ]


def test_arms_pair_by_seed_and_by_task_and_leave_incomplete_runs_out() -> None:
    rates = {"t-a": 0.0, "t-b": 0.5}
    start = HeldoutScore(success=0.25, per_task=rates, facts=0.25, facts_per_task=rates)
    families = {"t-a": "multi_city_weather", "t-b": "flight_packing"}
    floor, arm = arm_results(_runs(), floor="grpo", start=start, families=families)
    assert (arm.arm, arm.seeds, arm.steps) == ("gdpo", [0, 1], 3)
    assert arm.incomplete == ["seed 2: 2/3 steps"]
    # Seed-paired: seed 0 1.0 - 0.5, seed 1 0.5 - 0.0 -> 0.5 both.
    assert arm.vs_floor is not None and (arm.vs_floor.estimate, arm.vs_floor.n) == (0.5, 2)
    assert (arm.vs_floor.low, arm.vs_floor.high) == (0.5, 0.5)
    # By task, seeds averaged: gdpo (0.5, 1.0) against grpo (0.0, 0.5).
    assert arm.vs_floor_by_task is not None and arm.vs_floor_by_task.estimate == 0.5
    assert arm.vs_floor_by_task.n == 2
    # vs start, by seed: 1.0 - 0.25 and 0.5 - 0.25: both above 0.
    assert arm.vs_start is not None and arm.vs_start.estimate == pytest.approx(0.5)
    assert arm.verdict == "learned"
    # grpo: 0.5 - 0.25 and 0.0 - 0.25 straddle 0.
    assert floor.vs_start is not None and floor.vs_start.estimate == pytest.approx(0.0)
    assert floor.verdict == "no evidence it learned"
    assert floor.vs_floor is None and floor.incomplete == []
    assert arm.success is not None and arm.success.estimate == 0.75
    assert arm.by_family["flight_packing"].estimate == 1.0
    assert arm.by_family["multi_city_weather"].estimate == 0.5

    table = arms_table([floor, arm], floor="grpo", start=start)
    row = next(line for line in table.splitlines() if line.startswith("| gdpo |"))
    assert "| 0,1 | 3 | 0.750 [0.500, 1.000] | +0.500 [+0.500, +0.500] |" in row
    # Success and facts vs start by seed: 0.75 and 0.25 -> +0.5, the interval spans the two seeds.
    vs_start = "| +0.500 [+0.250, +0.750] | +0.500 [+0.250, +0.750] |"
    assert row.endswith(f"{vs_start} learned | seed 2: 2/3 steps |")
    assert "Fewer than 3 complete seeds: grpo, gdpo." in table
    header = family_table([floor, arm]).splitlines()[0]
    assert header == "| arm | multi_city_weather | flight_packing |"


def test_report_pools_only_complete_runs_and_keeps_the_arms_in_json(tmp_path: Path) -> None:
    start = HeldoutScore(success=0.25, per_task={"t-a": 0.0, "t-b": 0.5})
    write_ablation(_runs(), tmp_path, start=start, floor="grpo")
    written = json.loads((tmp_path / "ablation.json").read_text())
    assert [arm["arm"] for arm in written["arms"]] == ["grpo", "gdpo"]
    assert written["arms"][1]["vs_floor"]["estimate"] == 0.5
    assert [run["complete"] for run in written["runs"]] == [True] * 4 + [False]
    table = (tmp_path / "ablation.md").read_text()
    assert "Incomplete runs, not pooled above: gdpo seed 2 (2/3 steps)." in table
    # The training means pool gdpo's two complete seeds only (12 episodes each).
    assert "| gdpo | 0,1 | 3 | 24 |" in table
    assert (tmp_path / "ablation.png").stat().st_size > 0


def test_an_arm_without_held_out_scores_has_no_intervals() -> None:
    runs = [ablation_run("grpo", 0, 0.2), ablation_run("gdpo", 0, 0.4)]
    results = arm_results(runs, floor="grpo")
    assert all(r.success is None and r.vs_floor is None and r.verdict == "-" for r in results)
    assert family_table(results) == ""


def test_the_pinned_decoupling_config_mixes_a_stated_and_a_hidden_need_family() -> None:
    import yaml

    from mcp_servers.toolenv.hidden_needs import HIDDEN_NEED_FAMILIES
    from training.experiments.ablation import arm_set
    from training.rl import RLConfig

    path = Path(__file__).resolve().parents[3] / "training/configs/rl_ablation_decoupling_cpu.yaml"
    values = yaml.safe_load(path.read_text())
    # The start is the best SFT adapter there is (the shipped one until a v2 beats it on dev).
    assert values["adapter"] == "paraagent_runtime/policy/adapters/paraagent-135m"
    config = RLConfig(**values)
    families = set(config.task_families or ())
    assert len(families) >= 2 and families & set(HIDDEN_NEED_FAMILIES)
    assert families - set(HIDDEN_NEED_FAMILIES)
    # Every step trains on both families.
    tasks = config.training_tasks()
    for step in range(config.steps):
        batch = tasks[step * config.tasks_per_step : (step + 1) * config.tasks_per_step]
        assert {task.family for task in batch} == families
    arms = arm_set("decoupling")
    assert arms.floor == "grpo" and set(arms.estimators) == {
        "grpo",
        "grpo_summed",
        "gdpo",
        "multilevel",
    }

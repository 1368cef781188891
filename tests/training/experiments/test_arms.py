from __future__ import annotations

import json
from pathlib import Path

import pytest

from training.experiments.ablation_report import write_ablation
from training.experiments.arms import (
    arm_results,
    arms_table,
    contrast_results,
    contrasts_table,
    family_table,
    seed_interval,
)
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


T_2 = 4.302652729911275
"""The 97.5% quantile of Student's t with 2 degrees of freedom (three seeds)."""


def _runs() -> list:
    return [
        _scored("grpo", 0, 0.0, 1.0),
        _scored("grpo", 1, 0.0, 0.0),
        _scored("grpo", 2, 1.0, 0.0),
        _scored("gdpo", 0, 1.0, 1.0),
        _scored("gdpo", 1, 1.0, 1.0),
        _scored("gdpo", 2, 0.0, 1.0),
        # Stopped after 2 of 3 steps: listed, never pooled (it would pull gdpo down).
        _scored("gdpo", 3, 0.0, 0.0, steps=2),
    ]


def test_arms_pair_by_seed_and_by_task_and_leave_incomplete_runs_out() -> None:
    rates = {"t-a": 0.0, "t-b": 0.5}
    start = HeldoutScore(success=0.25, per_task=rates, facts=0.25, facts_per_task=rates)
    families = {"t-a": "multi_city_weather", "t-b": "flight_packing"}
    floor, arm = arm_results(_runs(), floor="grpo", start=start, families=families)
    assert (arm.arm, arm.seeds, arm.steps) == ("gdpo", [0, 1, 2], 3)
    assert arm.incomplete == ["seed 3: 2/3 steps"]
    # Seed-paired: 1.0 - 0.5, 1.0 - 0.0, 0.5 - 0.5 -> mean 0.5, sd 0.5, t interval over 3 seeds.
    half = T_2 * 0.5 / 3**0.5
    assert arm.vs_floor is not None and (arm.vs_floor.estimate, arm.vs_floor.n) == (0.5, 3)
    assert (arm.vs_floor.low, arm.vs_floor.high) == pytest.approx((0.5 - half, 0.5 + half))
    # By task, seeds averaged: gdpo (2/3, 1.0) against grpo (1/3, 1/3).
    assert arm.vs_floor_by_task is not None and arm.vs_floor_by_task.n == 2
    assert arm.vs_floor_by_task.estimate == pytest.approx(0.5)
    # vs start, by seed: 0.75, 0.75, 0.25: the t interval spans 0 (three seeds, one off).
    assert arm.vs_start is not None and arm.vs_start.estimate == pytest.approx(7 / 12)
    assert arm.vs_start.low < 0 < arm.vs_start.high
    assert arm.verdict == "no evidence it learned"
    assert floor.vs_start is not None and floor.vs_start.estimate == pytest.approx(1 / 12)
    assert floor.verdict == "no evidence it learned"
    assert floor.vs_floor is None and floor.incomplete == []
    assert arm.success is not None and arm.success.estimate == pytest.approx(5 / 6)
    assert arm.by_family["flight_packing"].estimate == 1.0
    assert arm.by_family["multi_city_weather"].estimate == pytest.approx(2 / 3)

    table = arms_table([floor, arm], floor="grpo", start=start)
    row = next(line for line in table.splitlines() if line.startswith("| gdpo |"))
    assert f"| 0,1,2 | 3 | 0.833 [{5 / 6 - T_2 * (1 / 12) ** 0.5 / 3**0.5:.3f}, " in row
    assert row.endswith("no evidence it learned | seed 3: 2/3 steps |")
    assert "Student-t" in table and "Fewer than" not in table
    header = family_table([floor, arm]).splitlines()[0]
    assert header == "| arm | multi_city_weather | flight_packing |"


def test_every_seed_agreeing_gives_a_verdict_and_one_seed_gives_no_interval() -> None:
    start = HeldoutScore(success=0.0, per_task={"t-a": 0.0, "t-b": 0.0})
    runs = [_scored("gdpo", seed, 1.0, 0.0) for seed in range(3)] + [_scored("grpo", 0, 0.0, 1.0)]
    arm, floor = arm_results(runs, floor="grpo", start=start)
    assert arm.vs_start is not None and (arm.vs_start.low, arm.vs_start.high) == (0.5, 0.5)
    assert arm.verdict == "learned"
    assert floor.success is not None and floor.success.n == 1 and floor.verdict == "-"
    assert "Fewer than 3 complete seeds: grpo." in arms_table([arm, floor], floor="grpo")
    # Rates stay inside [0, 1] however wide the t interval: successes 1.0, 1.0, 0.0.
    assert seed_interval([1.0, 1.0, 0.0], rate=True).high == 1.0
    assert seed_interval([1.0, 1.0, 0.0]).high > 1.0


def test_contrasts_pair_arms_with_the_same_reward_information() -> None:
    runs = _runs()
    [contrast] = contrast_results(runs, [("gdpo", "grpo"), ("multilevel", "grpo")])
    [arm] = [r for r in arm_results(runs, floor="grpo") if r.arm == "gdpo"]
    assert (contrast.arm, contrast.reference, contrast.seeds) == ("gdpo", "grpo", [0, 1, 2])
    assert contrast.by_seed == arm.vs_floor and contrast.by_task == arm.vs_floor_by_task
    assert contrast.facts_by_seed == arm.facts_vs_floor
    table = contrasts_table([contrast])
    assert "| gdpo − grpo | 0,1,2 | +0.500 [" in table
    assert contrasts_table([]) == ""


def test_report_pools_only_complete_runs_and_keeps_the_arms_in_json(tmp_path: Path) -> None:
    start = HeldoutScore(success=0.25, per_task={"t-a": 0.0, "t-b": 0.5})
    write_ablation(_runs(), tmp_path, start=start, floor="grpo", contrasts=[("gdpo", "grpo")])
    written = json.loads((tmp_path / "ablation.json").read_text())
    assert [arm["arm"] for arm in written["arms"]] == ["grpo", "gdpo"]
    assert written["arms"][1]["vs_floor"]["estimate"] == 0.5
    assert written["contrasts"][0]["by_seed"] == written["arms"][1]["vs_floor"]
    assert [run["complete"] for run in written["runs"]] == [True] * 6 + [False]
    table = (tmp_path / "ablation.md").read_text()
    assert "Incomplete runs, not pooled above: gdpo seed 3 (2/3 steps)." in table
    assert "| contrast | seeds |" in table
    # The training means pool gdpo's three complete seeds only (12 episodes each).
    assert "| gdpo | 0,1,2 | 3 | 36 |" in table
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
    assert {arm for pair in arms.contrasts for arm in pair} == set(arms.estimators) - {"grpo"}
    assert arms.floor == "grpo" and set(arms.estimators) == {
        "grpo",
        "grpo_summed",
        "gdpo",
        "multilevel",
    }

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from training.experiments.ablation_report import (
    ablation_table,
    depth_table,
    heldout_scores,
    plot_ablation,
)
from training.experiments.heldout import DepthScore, Heldout, HeldoutScore

from .helpers import ablation_run as _run


def test_table_has_one_row_per_estimator_with_mean_and_std_over_seeds() -> None:
    runs = [_run("grpo", 0, 0.2), _run("grpo", 1, 0.4), _run("multilevel", 0, 0.5)]
    lines = ablation_table(runs).splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| grpo | 0,1 | 3 | 24 | 0.300 ± 0.141")
    assert lines[3].startswith("| multilevel | 0 | 3 | 12 | 0.500 |")


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
    # Before any run is complete the plot has the start's bar alone (and no empty legend).
    start_only = plot_ablation([], tmp_path / "c.png", start=start, heldout=spec)
    assert Image.open(start_only).size == Image.open(png).size


def test_table_says_how_heldout_success_was_measured() -> None:
    spec = Heldout(tasks=12, samples=4, temperature=1.0)
    start = HeldoutScore(success=0.25)
    table = ablation_table([_run("grpo", 0, 0.2)], start=start, heldout=spec)
    assert table.splitlines()[2].startswith("| start (no RL) | - | 0 | 0 | - | - | 0.250 | - | - |")
    assert "Held-out success: 12 dev tasks, 4 samples at T=1.0." in table
    # sqrt(0.25 * 0.75 / 48)
    assert "binomial standard error at the start's rate is 0.062." in table
    without_start = ablation_table([_run("grpo", 0, 0.2)], heldout=spec)
    assert "4 samples at T=1.0. Facts: the mean share" in without_start


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


def test_table_gives_each_estimator_its_paired_difference_to_the_start() -> None:
    def score(
        success: tuple[float, float], facts: tuple[float, float], errors: float
    ) -> HeldoutScore:
        return HeldoutScore(
            success=sum(success) / 2,
            per_task=dict(zip("ab", success, strict=True)),
            format_errors=errors,
            facts=sum(facts) / 2,
            facts_per_task=dict(zip("ab", facts, strict=True)),
        )

    start = score((0.5, 0.5), (0.25, 0.75), 0.25)
    final = score((1.0, 0.5), (1.0, 0.75), 1.5)
    run = _run("grpo", 0, 0.2).model_copy(update={"heldout": final})
    table = ablation_table([run, _run("multilevel", 0, 0.3)], start=start)
    start_row, grpo, multilevel = table.splitlines()[2:5]
    assert "| 0.500 | - | 0.500 | - | 0.250 |" in start_row
    # success: differences +0.5 and 0 over the two tasks; facts: +0.75 and 0. Paired bootstrap
    # 95% intervals over two tasks span the two differences.
    assert "| 0.750 | +0.250 [+0.000, +0.500] | 0.875 | +0.375 [+0.000, +0.750] | 1.500 |" in grpo
    assert "| - | - | - | - | - |" in multilevel  # no held-out score: no success, facts, errors

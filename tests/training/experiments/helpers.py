"""Shared pieces of the experiment tests: an ablation run's outcome."""

from __future__ import annotations

from training.experiments.ablation_report import AblationRun


def ablation_run(estimator: str, seed: int, reward: float) -> AblationRun:
    """An ablation run's outcome with made-up numbers (trajectory reward ``reward``)."""
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

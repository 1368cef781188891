"""Trajectory-only GRPO vs. multi-level advantages: the same runs, seeds and budget, one table.

Every (estimator, seed) pair is one :class:`~training.rl.trainer.RLTrainer` run from the same RL
config, differing only in ``advantage.estimator`` and ``seed``: same tasks, same steps, same
rollouts per step, so the same number of sampled episodes. Runs are resumable (each has its own
directory); a finished run is read back, not rerun. Optionally the starting policy and each final
policy are evaluated on the same held-out ToolEnv tasks (:class:`Heldout`: greedy, or several
samples per task at a temperature).

Outputs in ``output_dir`` (:mod:`.ablation_report`): ``ablation.json`` (per run and per estimator),
``ablation.md`` (the table, and held-out success by gold-graph depth) and ``ablation.png``
(trajectory reward and success per step, mean over seeds). Held-out scoring and its cache:
:mod:`.heldout`.

``paraagent train rl ablation --config training/configs/rl_cpu.yaml --seed 0 --seed 1``
"""

from __future__ import annotations

import dataclasses
import json
import logging
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paraagent_runtime import ConfigError, Task
from training.rl.config import RLConfig
from training.rl.trainer import METRICS, RLTrainer

from .ablation_report import CURVES, AblationRun, write_ablation
from .heldout import Heldout, HeldoutScore, cached_score, heldout_tasks, save_score, score_key

__all__ = ["DEFAULT_ESTIMATORS", "run_ablation"]

logger = logging.getLogger(__name__)

DEFAULT_ESTIMATORS = ("grpo", "multilevel")
START_SCORE = "start.json"
FINAL_SCORE = "heldout.json"
EPISODES = "heldout.jsonl"


def _read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _summarize(
    config: RLConfig, rows: list[dict[str, Any]], window: int, heldout: HeldoutScore | None
) -> AblationRun:
    if not rows:
        raise ConfigError(f"{config.output_dir / METRICS}: the run logged no step")
    tail = rows[-window:]
    return AblationRun(
        estimator=config.advantage.estimator,
        seed=config.seed,
        steps=len(rows),
        episodes=len(rows) * config.tasks_per_step * config.group_size,
        final_reward=statistics.fmean(r["reward/trajectory_mean"] for r in tail),
        final_success=statistics.fmean(r["success"] for r in tail),
        zero_variance_groups=statistics.fmean(r["zero_variance_groups"] for r in rows),
        wall_s=sum(r["step_time_s"] for r in rows),
        heldout=heldout,
        curves={key: [float(r[key]) for r in rows] for key, _ in CURVES},
    )


def _variant(base: RLConfig, estimator: str, seed: int, output_dir: Path) -> RLConfig:
    advantage = dataclasses.replace(base.advantage, estimator=estimator)
    return dataclasses.replace(
        base,
        advantage=advantage,
        seed=seed,
        output_dir=output_dir / f"{estimator}-seed{seed}",
        resume=True,
    )


def run_ablation(
    base: RLConfig,
    *,
    output_dir: Path,
    estimators: Sequence[str] = DEFAULT_ESTIMATORS,
    seeds: Sequence[int] = (0, 1),
    window: int = 5,
    heldout: Heldout | None = None,
) -> list[AblationRun]:
    """Run (or read back) every estimator with every seed and write the table and the PNG.

    Args:
        base: The RL config every run shares (its ``output_dir``, ``seed`` and estimator are
            replaced per run).
        output_dir: Where the runs and the comparison go.
        estimators: Advantage estimators to compare.
        seeds: Seeds every estimator runs with.
        window: Steps at the end averaged into the final numbers.
        heldout: How the start and each final policy are evaluated (``None`` skips it).

    Raises:
        ConfigError: no estimator or seed, a window < 1, or an unknown estimator.
    """
    if not estimators or not seeds:
        raise ConfigError("run_ablation: give at least one estimator and one seed")
    if window < 1:
        raise ConfigError("run_ablation: window must be >= 1")
    variants = [_variant(base, e, s, output_dir) for e in estimators for s in seeds]
    heldout_set: list[Task] = []
    start = None
    if heldout is not None:
        heldout_set = heldout_tasks(base, heldout.tasks)
        start = _start_heldout(base, output_dir, heldout_set, heldout)
    runs = []
    for config in variants:
        metrics = config.output_dir / METRICS
        finished = len(_read_metrics(metrics)) >= config.steps
        score = key = None
        if heldout is not None:
            key = score_key(config, heldout_set, heldout, step=config.steps)
            score = cached_score(config.output_dir / FINAL_SCORE, key, config.output_dir / EPISODES)
        if not finished or (key is not None and score is None):
            logger.info("ablation run %s", config.output_dir)
            trainer = RLTrainer(config)
            try:
                trainer.train()
                if heldout is not None:
                    # max_time_s may have stopped the run before config.steps.
                    key = score_key(config, heldout_set, heldout, step=trainer.step)
                    score = _evaluate(trainer, heldout_set, heldout)
                    save_score(config.output_dir / FINAL_SCORE, key, score)
            finally:
                trainer.close()
        runs.append(_summarize(config, _read_metrics(metrics), window, score))
    write_ablation(runs, output_dir, start=start, heldout=heldout)
    return runs


def _evaluate(trainer: RLTrainer, tasks: Sequence[Task], heldout: Heldout) -> HeldoutScore:
    """Score the trainer's policy; its episodes go to ``heldout.jsonl`` in its output folder."""
    _, rows = trainer.evaluate(
        tasks,
        samples=heldout.samples,
        temperature=heldout.temperature,
        episodes=trainer.output_dir / EPISODES,
    )
    return HeldoutScore.from_rows(rows)


def _start_heldout(
    base: RLConfig, output_dir: Path, tasks: Sequence[Task], heldout: Heldout
) -> HeldoutScore:
    """Held-out success of the starting policy (step 0), cached in ``start.json``.

    The same tasks and decoding as the final policies' evaluation, so before and after compare.
    The cache is reused only for the same starting weights, tasks and decoding.
    """
    key = score_key(base, tasks, heldout, step=0)
    cache = output_dir / START_SCORE
    start_dir = output_dir / "start"
    score = cached_score(cache, key, start_dir / EPISODES)
    if score is not None:
        return score
    config = dataclasses.replace(base, output_dir=start_dir, resume=False, steps=1)
    trainer = RLTrainer(config)
    try:
        score = _evaluate(trainer, tasks, heldout)
    finally:
        trainer.close()
    save_score(cache, key, score)
    return score

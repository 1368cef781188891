"""Advantage estimators side by side: the same runs, seeds and budget, one table.

Every (estimator, seed) pair is one :class:`~training.rl.trainer.RLTrainer` run from the same RL
config, differing only in ``advantage.estimator`` and ``seed``: same tasks, same steps, same
rollouts per step, so the same number of sampled episodes. The estimators come as a named arm set
(:data:`ARM_SETS`): ``default`` is trajectory-only GRPO vs multi-level; ``decoupling`` (issue #29)
adds the two arms that see exactly the multi-level reward information without its decoupling
(``grpo_summed``, ``gdpo``; :mod:`training.algo.advantages`), with trajectory-only ``grpo`` as the
floor every arm is paired against. Runs are resumable (each has its own directory); a finished run
is read back, not rerun, and ``train=False`` only reads back (regenerates the report from the run
directories). A run that did not log exactly the planned steps (stopped by ``max_time_s``, or
from a longer earlier plan) is reported as incomplete and not pooled. Optionally the starting
policy and each final policy are evaluated on the same held-out ``dev`` tasks (:class:`Heldout`:
greedy, or several samples per task at a temperature). With a keep folder (:mod:`.kept_runs`),
finished runs' small files are copied there as each finishes and restored from it first, so a
lost machine costs at most the unfinished runs.

Outputs in ``output_dir`` (:mod:`.ablation_report`): ``ablation.json`` (per run, per arm),
``ablation.md`` (the arms with seed-level intervals, :mod:`.arms`; the per-family table; the
training means; held-out success by gold-graph depth) and ``ablation.png`` (trajectory reward and
success per step, mean over seeds with a min–max band). Held-out scoring and its cache:
:mod:`.heldout`.

``paraagent train rl ablation --config training/configs/rl_cpu.yaml --seed 0 --seed 1``
"""

from __future__ import annotations

import dataclasses
import json
import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraagent_runtime import ConfigError, Task
from training.rl.config import RLConfig
from training.rl.trainer import METRICS, RLTrainer

from .ablation_report import CURVES, AblationRun, write_ablation
from .heldout import Heldout, HeldoutScore, cached_score, heldout_tasks, save_score, score_key
from .kept_runs import keep, restore

__all__ = ["ARM_SETS", "DEFAULT_ESTIMATORS", "ArmSet", "arm_set", "run_ablation"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArmSet:
    """A named set of estimators to compare, and the floor arm the others are paired against."""

    estimators: tuple[str, ...]
    floor: str
    contrasts: tuple[tuple[str, str], ...] = ()
    """``(arm, reference)`` pairs of arms with the same reward information, compared directly."""


ARM_SETS = {
    "default": ArmSet(("grpo", "multilevel"), floor="grpo"),
    "decoupling": ArmSet(
        ("grpo", "grpo_summed", "gdpo", "multilevel"),
        floor="grpo",
        contrasts=(("multilevel", "grpo_summed"), ("gdpo", "grpo_summed"), ("multilevel", "gdpo")),
    ),
}
"""Arm sets by name: ``decoupling`` is issue #29's four arms; three share the reward information
and are contrasted with each other, which isolates the normalization (the decoupling itself)."""

DEFAULT_ESTIMATORS = ARM_SETS["default"].estimators


def arm_set(name: str) -> ArmSet:
    """The arm set called ``name``.

    Raises:
        ConfigError: no such set.
    """
    if name not in ARM_SETS:
        raise ConfigError(f"arms: unknown set {name!r} (use one of {', '.join(ARM_SETS)})")
    return ARM_SETS[name]


START_SCORE = "start.json"
FINAL_SCORE = "heldout.json"
EPISODES = "heldout.jsonl"
START_DIR = "start"


def _read_metrics(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _summarize(
    config: RLConfig, rows: list[dict[str, Any]], window: int, heldout: HeldoutScore | None
) -> AblationRun:
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
        target_steps=config.steps,
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
    floor: str | None = None,
    contrasts: Sequence[tuple[str, str]] = (),
    train: bool = True,
    keep_dir: Path | None = None,
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
        floor: The estimator every other one is paired against (default: the first).
        contrasts: ``(arm, reference)`` pairs of estimators also compared directly.
        train: ``False`` trains and evaluates nothing: it reads back what the run directories
            hold (a run with no step logged is left out with a warning) and rewrites the report.
        keep_dir: A second home for the small files of finished runs (:mod:`.kept_runs`): what
            ``output_dir`` lacks is restored from it first, and the start's and each finished
            run's scores, episodes and logged steps are copied to it as soon as they exist.

    Raises:
        ConfigError: no estimator or seed, a window < 1, a keep_dir that is a file, an unknown
            estimator, a floor or contrast arm that is not one of the estimators, or (reading
            back) no run with a logged step.
    """
    if not estimators or not seeds:
        raise ConfigError("run_ablation: give at least one estimator and one seed")
    if window < 1:
        raise ConfigError("run_ablation: window must be >= 1")
    floor = floor or estimators[0]
    if floor not in estimators:
        raise ConfigError(f"run_ablation: the floor {floor!r} is not among the estimators")
    strangers = sorted({arm for pair in contrasts for arm in pair} - set(estimators))
    if strangers:
        raise ConfigError(f"run_ablation: contrast arms {strangers} are not among the estimators")
    if keep_dir is not None and keep_dir.exists() and not keep_dir.is_dir():
        raise ConfigError(f"run_ablation: keep_dir {keep_dir} is a file, not a folder")
    variants = [_variant(base, e, s, output_dir) for e in estimators for s in seeds]
    if keep_dir is not None:
        restore(keep_dir, output_dir)
    heldout_set: list[Task] = []
    start = None
    if heldout is not None:
        heldout_set = heldout_tasks(base, heldout.tasks)
        start = _start_heldout(base, output_dir, heldout_set, heldout, evaluate=train)
        if start is not None and keep_dir is not None:
            start_files = [output_dir / START_SCORE, output_dir / START_DIR / EPISODES]
            keep(output_dir, keep_dir, start_files)
    runs = []
    for config in variants:
        rows = _read_metrics(config.output_dir / METRICS)
        score = None
        if heldout is not None:
            key = score_key(config, heldout_set, heldout, step=len(rows))
            score = cached_score(config.output_dir / FINAL_SCORE, key, config.output_dir / EPISODES)
        if train and (len(rows) < config.steps or (heldout is not None and score is None)):
            score = _train(config, heldout_set, heldout)
            rows = _read_metrics(config.output_dir / METRICS)
        if not rows:
            logger.warning("ablation: %s has no logged step; left out", config.output_dir)
            continue
        finished = len(rows) >= config.steps and (heldout is None or score is not None)
        if finished and keep_dir is not None:
            files = (METRICS, FINAL_SCORE, EPISODES)
            keep(output_dir, keep_dir, [config.output_dir / name for name in files])
        runs.append(_summarize(config, rows, window, score))
    if not runs:
        raise ConfigError(f"run_ablation: no run under {output_dir} has a logged step")
    families = {task.id: task.family for task in heldout_set}
    write_ablation(
        runs,
        output_dir,
        start=start,
        heldout=heldout,
        floor=floor,
        contrasts=contrasts,
        families=families or None,
    )
    return runs


def _train(config: RLConfig, tasks: Sequence[Task], heldout: Heldout | None) -> HeldoutScore | None:
    """Train one run to its steps (resuming) and score its final policy when asked."""
    logger.info("ablation run %s", config.output_dir)
    trainer = RLTrainer(config)
    try:
        trainer.train()
        if heldout is None:
            return None
        # max_time_s may have stopped the run before config.steps.
        key = score_key(config, tasks, heldout, step=trainer.step)
        score = _evaluate(trainer, tasks, heldout)
        save_score(config.output_dir / FINAL_SCORE, key, score)
        return score
    finally:
        trainer.close()


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
    base: RLConfig,
    output_dir: Path,
    tasks: Sequence[Task],
    heldout: Heldout,
    *,
    evaluate: bool = True,
) -> HeldoutScore | None:
    """Held-out success of the starting policy (step 0), cached in ``start.json``.

    The same tasks and decoding as the final policies' evaluation, so before and after compare.
    The cache is reused only for the same starting weights, tasks and decoding; with
    ``evaluate=False`` a missing cache gives ``None``.
    """
    key = score_key(base, tasks, heldout, step=0)
    cache = output_dir / START_SCORE
    start_dir = output_dir / START_DIR
    score = cached_score(cache, key, start_dir / EPISODES)
    if score is not None or not evaluate:
        return score
    config = dataclasses.replace(base, output_dir=start_dir, resume=False, steps=1)
    trainer = RLTrainer(config)
    try:
        score = _evaluate(trainer, tasks, heldout)
    finally:
        trainer.close()
    save_score(cache, key, score)
    return score

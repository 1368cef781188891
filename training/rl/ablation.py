"""Trajectory-only GRPO vs. multi-level advantages: the same runs, seeds and budget, one table.

Every (estimator, seed) pair is one :class:`~training.rl.trainer.RLTrainer` run from the same RL
config, differing only in ``advantage.estimator`` and ``seed``: same tasks, same steps, same
rollouts per step, so the same number of sampled episodes. Runs are resumable (each has its own
directory); a finished run is read back, not rerun. Optionally the starting policy and each final
policy are evaluated on the same held-out ToolEnv tasks (:class:`Heldout`: greedy, or several
samples per task at a temperature).

Outputs in ``output_dir``: ``ablation.json`` (per run and per estimator), ``ablation.md`` (the
table, and held-out success by gold-graph depth) and ``ablation.png`` (trajectory reward and success per step, mean over seeds).

``paraagent train rl ablation --config training/configs/rl_cpu.yaml --seed 0 --seed 1``
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mcp_servers.toolenv import Task, generate_tasks
from mcp_servers.toolenv.evaluation import EpisodeMetrics
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.trajectory import read_episodes
from training.evaluate import check_eval_decoding

from .config import RLConfig
from .trainer import METRICS, RLTrainer

__all__ = [
    "AblationRun",
    "DepthScore",
    "Heldout",
    "HeldoutScore",
    "ablation_table",
    "depth_table",
    "heldout_scores",
    "paired_difference",
    "plot_ablation",
    "run_ablation",
]

logger = logging.getLogger(__name__)

DEFAULT_ESTIMATORS = ("grpo", "multilevel")
HELDOUT = "test-seen"
START_SCORE = "start.json"
FINAL_SCORE = "heldout.json"
EPISODES = "heldout.jsonl"
_CURVES = (("reward/trajectory_mean", "trajectory reward"), ("success", "success (train rollouts)"))


class Heldout(BaseModel):
    """How the starting and the final policies are evaluated on held-out tasks.

    Attributes:
        tasks: ``test-seen`` tasks (from the RL config's ``task_families`` when set).
        samples: Episodes per task (more than 1 needs a temperature).
        temperature: 0 is greedy; above 0 every episode samples at it.
    """

    tasks: int
    samples: int = 1
    temperature: float = 0.0

    def model_post_init(self, context: Any, /) -> None:
        """Reject counts below 1, a negative temperature, and repeated greedy samples."""
        if self.tasks < 1:
            raise ConfigError(f"held-out: need tasks >= 1, got {self.tasks}")
        check_eval_decoding(self.samples, self.temperature, owner="held-out")

    @property
    def episodes(self) -> int:
        """Episodes behind one held-out score."""
        return self.tasks * self.samples

    def standard_error(self, rate: float) -> float:
        """Binomial standard error of one score at success ``rate``.

        Episodes count as independent, which repeated samples of one task are not quite.
        """
        return math.sqrt(rate * (1 - rate) / self.episodes)

    def describe(self) -> str:
        """One line for the report, e.g. ``12 test-seen tasks, 4 samples at T=1.0``."""
        plural = "s" if self.samples > 1 else ""
        decoding = (
            "greedy"
            if self.temperature == 0
            else f"{self.samples} sample{plural} at T={self.temperature}"
        )
        return f"{self.tasks} {HELDOUT} tasks, {decoding}"


class DepthScore(BaseModel):
    """Held-out episodes of one gold call-graph depth (1: independent calls; 2 and more: chained).

    Attributes:
        episodes: Episodes of tasks with this depth.
        success: Their success rate.
        calls_per_execute_turn: Tool calls per execute turn over them (a chain done right makes 1).
    """

    episodes: int
    success: float
    calls_per_execute_turn: float

    @classmethod
    def from_rows(cls, rows: Sequence[EpisodeMetrics]) -> DepthScore:
        """The episodes' success and calls per execute turn (``rows`` is not empty)."""
        execute_turns = sum(row.execute_turns for row in rows)
        return cls(
            episodes=len(rows),
            success=statistics.fmean(row.success for row in rows),
            calls_per_execute_turn=(
                sum(row.execute_calls for row in rows) / execute_turns if execute_turns else 0.0
            ),
        )


class HeldoutScore(BaseModel):
    """One policy's held-out result.

    Attributes:
        success: Success over every episode.
        per_task: Success rate per task id (``None`` in a score cached before it was kept).
        format_errors: Mean turns with a format error per episode (``None`` likewise).
        by_depth: Success and calls per execute turn per gold-graph depth (``None`` likewise).
    """

    success: float
    per_task: dict[str, float] | None = None
    format_errors: float | None = None
    by_depth: dict[int, DepthScore] | None = None

    @classmethod
    def from_rows(cls, rows: Sequence[EpisodeMetrics]) -> HeldoutScore:
        """The score of evaluated episodes (several per task when sampled)."""
        by_task: dict[str, list[bool]] = defaultdict(list)
        by_depth: dict[int, list[EpisodeMetrics]] = defaultdict(list)
        for row in rows:
            by_task[row.task_id].append(row.success)
            by_depth[row.gold_depth].append(row)
        return cls(
            success=statistics.fmean(row.success for row in rows) if rows else 0.0,
            per_task={task: statistics.fmean(values) for task, values in by_task.items()},
            format_errors=statistics.fmean(row.format_error_turns for row in rows) if rows else 0.0,
            by_depth={
                depth: DepthScore.from_rows(group) for depth, group in sorted(by_depth.items())
            },
        )

    @classmethod
    def from_episodes(cls, path: Path) -> HeldoutScore:
        """The score of an evaluation's episodes file (each episode carries its metrics)."""
        return cls.from_rows(
            [
                EpisodeMetrics.model_validate(episode.metadata["metrics"])
                for episode in read_episodes(path, strict=True)
            ]
        )


def paired_difference(
    finals: Sequence[dict[str, float] | None], start: dict[str, float] | None
) -> tuple[float, float] | None:
    """Mean over tasks of (final − start) success, and its standard error over the tasks.

    Paired by task, so a task's difficulty cancels: the error is that of the difference, smaller
    than two independent scores' when the same tasks are easy or hard for both policies. With
    several finals (seeds), each task's final rate is their mean. ``None`` unless every policy
    has per-task rates on the same tasks, at least two of them.
    """
    if start is None or not finals or any(f is None or f.keys() != start.keys() for f in finals):
        return None
    if len(start) < 2:
        return None
    differences = [
        statistics.fmean(final[task] for final in finals if final is not None) - start[task]
        for task in start
    ]
    error = statistics.stdev(differences) / math.sqrt(len(differences))
    return statistics.fmean(differences), error


class AblationRun(BaseModel):
    """The outcome of one (estimator, seed) run.

    Attributes:
        estimator: The advantage estimator.
        seed: The run's seed (torch and rollout sampling).
        steps: Steps in the metrics file.
        episodes: Rollout episodes sampled in total (the budget).
        final_reward: Mean trajectory reward over the last ``window`` steps.
        final_success: Mean rollout success over the last ``window`` steps.
        zero_variance_groups: Mean share of zero-variance groups over all steps.
        wall_s: Sum of step times.
        heldout: The final policy's held-out score (``None`` when not evaluated).
        curves: Per-step values of the plotted metrics.
    """

    estimator: str
    seed: int
    steps: int
    episodes: int
    final_reward: float
    final_success: float
    zero_variance_groups: float
    wall_s: float
    heldout: HeldoutScore | None = None
    curves: dict[str, list[float]]


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
        curves={key: [float(r[key]) for r in rows] for key, _ in _CURVES},
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
        heldout_set = generate_tasks(
            heldout.tasks, seed=base.task_seed, split=HELDOUT, families=base.task_families
        )
        start = _start_heldout(base, output_dir, heldout_set, heldout)
    runs = []
    for config in variants:
        metrics = config.output_dir / METRICS
        finished = len(_read_metrics(metrics)) >= config.steps
        score = key = None
        if heldout is not None:
            key = _score_key(config, heldout_set, heldout, step=config.steps)
            score = _cached_score(
                config.output_dir / FINAL_SCORE, key, config.output_dir / EPISODES
            )
        if not finished or (key is not None and score is None):
            logger.info("ablation run %s", config.output_dir)
            trainer = RLTrainer(config)
            try:
                trainer.train()
                if heldout is not None:
                    # max_time_s may have stopped the run before config.steps.
                    key = _score_key(config, heldout_set, heldout, step=trainer.step)
                    score = _evaluate(trainer, heldout_set, heldout)
                    _save_score(config.output_dir / FINAL_SCORE, key, score)
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


def _score_key(
    config: RLConfig, tasks: Sequence[Task], heldout: Heldout, *, step: int
) -> dict[str, Any]:
    """What a cached held-out score depends on: weights (start point and step), tasks, decoding."""
    return {
        "model": config.model,
        "adapter": str(config.adapter) if config.adapter is not None else None,
        "dtype": config.dtype,
        "step": step,
        "tasks": [task.id for task in tasks],
        "max_turns": config.max_turns,
        "max_new_tokens": config.max_new_tokens,
        "samples": heldout.samples,
        "temperature": heldout.temperature,
    }


def _cached_score(path: Path, key: dict[str, Any], episodes: Path) -> HeldoutScore | None:
    """The score stored at ``path`` for exactly ``key`` (sampled scores are not re-drawn).

    A score cached before ``by_depth`` was kept gets it from the evaluation's ``episodes`` file
    when that is still there.
    """
    if not path.is_file():
        return None
    cached = json.loads(path.read_text(encoding="utf-8"))
    if cached.get("key") != key:
        return None
    by_depth = cached.get("by_depth")
    if by_depth is None and episodes.is_file():
        try:
            by_depth = HeldoutScore.from_episodes(episodes).by_depth
        except (ConfigError, KeyError) as exc:
            logger.warning("%s: no depth breakdown (%s)", episodes, exc)
    return HeldoutScore(
        success=cached["heldout_success"],
        per_task=cached.get("per_task"),
        format_errors=cached.get("format_errors"),
        by_depth=by_depth,
    )


def _save_score(path: Path, key: dict[str, Any], score: HeldoutScore) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "key": key,
        "split": HELDOUT,
        "heldout_success": score.success,
        "per_task": score.per_task,
        "format_errors": score.format_errors,
        "by_depth": score.model_dump()["by_depth"],
    }
    path.write_text(json.dumps(payload) + "\n", encoding="utf-8")


def _start_heldout(
    base: RLConfig, output_dir: Path, tasks: Sequence[Task], heldout: Heldout
) -> HeldoutScore:
    """Held-out success of the starting policy (step 0), cached in ``start.json``.

    The same tasks and decoding as the final policies' evaluation, so before and after compare.
    The cache is reused only for the same starting weights, tasks and decoding.
    """
    key = _score_key(base, tasks, heldout, step=0)
    cache = output_dir / START_SCORE
    start_dir = output_dir / "start"
    score = _cached_score(cache, key, start_dir / EPISODES)
    if score is not None:
        return score
    config = dataclasses.replace(base, output_dir=start_dir, resume=False, steps=1)
    trainer = RLTrainer(config)
    try:
        score = _evaluate(trainer, tasks, heldout)
    finally:
        trainer.close()
    _save_score(cache, key, score)
    return score


def _mean_std(values: Sequence[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.fmean(values):.3f} ± {statistics.stdev(values):.3f}"


def _paired_cell(group: Sequence[AblationRun], start: HeldoutScore | None) -> str:
    scored = [run.heldout.per_task for run in group if run.heldout is not None]
    paired = paired_difference(scored, start.per_task if start is not None else None)
    return "-" if paired is None else f"{paired[0]:+.3f} ± {paired[1]:.3f}"


def ablation_table(
    runs: Sequence[AblationRun],
    *,
    start: HeldoutScore | None = None,
    heldout: Heldout | None = None,
) -> str:
    """A markdown table: one row per estimator, mean ± std over seeds.

    With ``start`` a first row gives the starting policy's held-out success, and each
    estimator's row its paired difference to it (:func:`paired_difference`, when per-task
    rates were kept); with ``heldout`` a line under the table says how held-out success was
    measured.
    """
    lines = [
        "| estimator | seeds | steps | episodes | final reward | final success "
        "| held-out success | Δ held-out vs start | held-out format errors "
        "| zero-var groups | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    if start is not None:
        errors = "-" if start.format_errors is None else f"{start.format_errors:.3f}"
        lines.append(
            f"| start (no RL) | - | 0 | 0 | - | - | {start.success:.3f} | - | {errors} | - | 0 |"
        )
    for estimator in dict.fromkeys(run.estimator for run in runs):
        group = [run for run in runs if run.estimator == estimator]
        scored = [run.heldout for run in group if run.heldout is not None]
        scores = [score.success for score in scored]
        errors = [score.format_errors for score in scored if score.format_errors is not None]
        lines.append(
            f"| {estimator} | {','.join(str(run.seed) for run in group)} "
            f"| {group[0].steps} | {sum(run.episodes for run in group)} "
            f"| {_mean_std([run.final_reward for run in group])} "
            f"| {_mean_std([run.final_success for run in group])} "
            f"| {_mean_std(scores) if scores else '-'} "
            f"| {_paired_cell(group, start)} "
            f"| {_mean_std(errors) if errors else '-'} "
            f"| {_mean_std([run.zero_variance_groups for run in group])} "
            f"| {sum(run.wall_s for run in group):.0f} |"
        )
    if heldout is not None:
        note = f"Held-out success: {heldout.describe()}."
        if start is not None:
            note += (
                f" One score is the mean of {heldout.episodes} episodes: its binomial standard "
                f"error at the start's rate is {heldout.standard_error(start.success):.3f}."
                " Δ is the mean over tasks of (final − start) success ± its standard error"
                " over the tasks (paired by task; seeds averaged per task)."
            )
        note += " Format errors: turns with one, per held-out episode."
        lines += ["", note]
    return "\n".join(lines) + "\n"


def _pooled(scores: Sequence[DepthScore]) -> DepthScore:
    """Seeds' scores of one depth as one (episode-weighted success, mean calls per turn)."""
    episodes = sum(score.episodes for score in scores)
    return DepthScore(
        episodes=episodes,
        success=sum(score.success * score.episodes for score in scores) / episodes,
        calls_per_execute_turn=statistics.fmean(s.calls_per_execute_turn for s in scores),
    )


def depth_table(runs: Sequence[AblationRun], *, start: HeldoutScore | None = None) -> str:
    """Held-out success and calls per execute turn per gold-graph depth, as markdown.

    One row for the start and one per estimator (seeds pooled); empty when no score has a
    depth breakdown. A policy that issues a chained task's calls together, before their
    inputs exist, shows here: depth-2 success falls while its calls per execute turn rise
    above 1.
    """
    rows: list[tuple[str, dict[int, DepthScore]]] = []
    if start is not None and start.by_depth:
        rows.append(("start (no RL)", start.by_depth))
    for estimator in dict.fromkeys(run.estimator for run in runs):
        breakdowns = [
            run.heldout.by_depth
            for run in runs
            if run.estimator == estimator and run.heldout is not None and run.heldout.by_depth
        ]
        depths = sorted({depth for breakdown in breakdowns for depth in breakdown})
        pooled = {d: _pooled([b[d] for b in breakdowns if d in b]) for d in depths}
        if pooled:
            rows.append((estimator, pooled))
    if not rows:
        return ""
    depths = sorted({depth for _, breakdown in rows for depth in breakdown})
    header = "| policy | " + " | ".join(
        f"depth {d} success | depth {d} calls/execute turn" for d in depths
    )
    lines = [header + " |", "|---|" + "---|---|" * len(depths)]
    for name, breakdown in rows:
        cells = []
        for depth in depths:
            score = breakdown.get(depth)
            cells += (
                ["-", "-"]
                if score is None
                else [
                    f"{score.success:.3f} ({score.episodes})",
                    f"{score.calls_per_execute_turn:.2f}",
                ]
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    note = (
        "By gold call-graph depth (1: independent calls; 2: the second call needs the first's"
        " result): held-out success (episodes) and tool calls per execute turn."
    )
    return "\n".join([*lines, "", note]) + "\n"


def heldout_scores(
    runs: Sequence[AblationRun], start: HeldoutScore | None = None
) -> dict[str, list[float]]:
    """Held-out success per bar of the plot: the start, then each estimator's seeds in order."""
    scores = {"start": [start.success]} if start is not None else {}
    for estimator in dict.fromkeys(run.estimator for run in runs):
        group = [r.heldout for r in runs if r.estimator == estimator and r.heldout is not None]
        values = [score.success for score in group]
        if values:
            scores[estimator] = values
    return scores


def plot_ablation(
    runs: Sequence[AblationRun],
    png_path: Path,
    *,
    start: HeldoutScore | None = None,
    heldout: Heldout | None = None,
) -> Path:
    """Trajectory reward and success per step for each estimator (mean over seeds, min-max band).

    When held-out scores exist, a last panel shows them as bars (the start, then each
    estimator's mean over seeds with the seeds as dots); with ``heldout`` each bar carries the
    binomial standard error of a single score (one seed's) at its rate.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    bars = heldout_scores(runs, start)
    panels = len(_CURVES) + (1 if bars else 0)
    figure, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4))
    for axis, (key, title) in zip(axes, _CURVES, strict=False):
        for estimator in dict.fromkeys(run.estimator for run in runs):
            curves = [run.curves[key] for run in runs if run.estimator == estimator]
            length = min(len(curve) for curve in curves)
            steps = list(range(1, length + 1))
            columns = [[curve[i] for curve in curves] for i in range(length)]
            axis.plot(steps, [statistics.fmean(c) for c in columns], marker=".", label=estimator)
            axis.fill_between(
                steps, [min(c) for c in columns], [max(c) for c in columns], alpha=0.2
            )
        axis.set_title(title)
        axis.set_xlabel("step")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.legend(fontsize=8)
    if bars:
        axis = axes[-1]
        means = [statistics.fmean(values) for values in bars.values()]
        # The error of one score (one seed's), at each bar's rate: the spread a single
        # evaluation has, which is what the dots of the seeds are compared against.
        errors = [heldout.standard_error(m) for m in means] if heldout is not None else None
        positions = range(len(bars))
        axis.bar(positions, means, yerr=errors, capsize=4, color="lightsteelblue")
        for position, values in zip(positions, bars.values(), strict=True):
            axis.scatter([position] * len(values), values, color="black", s=12, zorder=3)
        axis.set_xticks(list(positions), list(bars))
        axis.set_ylim(0, 1)
        axis.set_title(f"held-out success ({heldout.describe()})" if heldout else "held-out")
        axis.title.set_fontsize(9)
    figure.tight_layout()
    png_path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(png_path, dpi=100)
    plt.close(figure)
    return png_path


def write_ablation(
    runs: Sequence[AblationRun],
    output_dir: Path,
    *,
    start: HeldoutScore | None = None,
    heldout: Heldout | None = None,
) -> None:
    """Write ``ablation.json``, ``ablation.md`` and ``ablation.png`` to ``output_dir``."""
    output_dir.mkdir(parents=True, exist_ok=True)
    table = ablation_table(runs, start=start, heldout=heldout)
    by_depth = depth_table(runs, start=start)
    if by_depth:
        table += "\n" + by_depth
    payload = {
        "runs": [run.model_dump() for run in runs],
        "start_heldout_success": start.success if start is not None else None,
        "start_heldout_per_task": start.per_task if start is not None else None,
        "start_heldout_by_depth": (
            start.model_dump()["by_depth"] if start is not None else None
        ),
        "heldout": heldout.model_dump() if heldout is not None else None,
        "table": table,
    }
    (output_dir / "ablation.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    (output_dir / "ablation.md").write_text(table, encoding="utf-8")
    plot_ablation(runs, output_dir / "ablation.png", start=start, heldout=heldout)

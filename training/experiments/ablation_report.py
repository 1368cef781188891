"""The ablation's report: one run's outcome, the markdown tables, the PNG, and the files.

:func:`write_ablation` writes ``ablation.json``, ``ablation.md`` (with held-out scores first the
arms at the seed level, :mod:`.arms`; then :func:`ablation_table` and :func:`depth_table`) and
``ablation.png`` (:func:`plot_ablation`). Only complete runs (every planned step) are pooled into
the tables and curves; incomplete ones are listed apart.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, computed_field

from paraagent_runtime.plotting import pyplot, save_figure
from training.evaluate import optional_cell

from .arms import arm_results, arms_table, contrast_results, contrasts_table, family_table
from .heldout import DepthScore, Heldout, HeldoutScore, format_paired, paired_difference
from .plot import draw_bars

__all__ = [
    "CURVES",
    "AblationRun",
    "ablation_table",
    "depth_table",
    "heldout_scores",
    "plot_ablation",
    "write_ablation",
]

CURVES = (("reward/trajectory_mean", "trajectory reward"), ("success", "success (train rollouts)"))


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
        target_steps: The steps the run was planned for (``None`` in an older report).
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
    target_steps: int | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def complete(self) -> bool:
        """Whether the run logged exactly its planned steps (only those are pooled)."""
        return self.target_steps is None or self.steps == self.target_steps


def _mean_std(values: Sequence[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.fmean(values):.3f} ± {statistics.stdev(values):.3f}"


def _paired_cell(
    group: Sequence[AblationRun],
    start: HeldoutScore | None,
    per_task: Literal["per_task", "facts_per_task"],
) -> str:
    scored = [getattr(run.heldout, per_task) for run in group if run.heldout is not None]
    paired = paired_difference(scored, getattr(start, per_task) if start is not None else None)
    return format_paired(paired)


def ablation_table(
    runs: Sequence[AblationRun],
    *,
    start: HeldoutScore | None = None,
    heldout: Heldout | None = None,
) -> str:
    """A markdown table: one row per estimator, mean ± std over seeds.

    With ``start`` a first row gives the starting policy's held-out success, and each
    estimator's row its paired difference to it (:func:`paired_difference`, when per-task
    rates were kept), for success and for the share of gold facts the answers state; with
    ``heldout`` a line under the table says how held-out success was measured.
    """
    lines = [
        "| estimator | seeds | steps | episodes | final reward | final success "
        "| held-out success | Δ held-out vs start | held-out facts | Δ facts vs start "
        "| held-out format errors | zero-var groups | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    if start is not None:
        lines.append(
            f"| start (no RL) | - | 0 | 0 | - | - | {start.success:.3f} | - "
            f"| {optional_cell(start.facts)} | - | {optional_cell(start.format_errors)} | - | 0 |"
        )
    for estimator in dict.fromkeys(run.estimator for run in runs):
        group = [run for run in runs if run.estimator == estimator]
        scored = [run.heldout for run in group if run.heldout is not None]
        scores = [score.success for score in scored]
        facts = [score.facts for score in scored if score.facts is not None]
        errors = [score.format_errors for score in scored if score.format_errors is not None]
        lines.append(
            f"| {estimator} | {','.join(str(run.seed) for run in group)} "
            f"| {group[0].steps} | {sum(run.episodes for run in group)} "
            f"| {_mean_std([run.final_reward for run in group])} "
            f"| {_mean_std([run.final_success for run in group])} "
            f"| {_mean_std(scores) if scores else '-'} "
            f"| {_paired_cell(group, start, 'per_task')} "
            f"| {_mean_std(facts) if facts else '-'} "
            f"| {_paired_cell(group, start, 'facts_per_task')} "
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
                " Δ is the mean over tasks of (final − start) success with its 95% interval"
                " (paired bootstrap over the tasks, seeded; seeds averaged per task)."
            )
        note += (
            " Facts: the mean share of the task's gold facts the final answer states (partial"
            " credit; Δ facts is paired the same way). Format errors: turns with one, per"
            " held-out episode."
        )
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
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    bars = heldout_scores(runs, start)
    panels = len(CURVES) + (1 if bars else 0)
    figure, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4))
    for axis, (key, title) in zip(axes, CURVES, strict=False):
        for estimator in dict.fromkeys(run.estimator for run in runs):
            curves = [run.curves[key] for run in runs if run.estimator == estimator]
            length = min(len(curve) for curve in curves)
            steps = list(range(1, length + 1))
            columns = [[curve[i] for curve in curves] for i in range(length)]
            axis.plot(steps, [statistics.fmean(c) for c in columns], marker=".", label=estimator)
            axis.fill_between(
                steps, [min(c) for c in columns], [max(c) for c in columns], alpha=0.2
            )
        axis.set_title(f"{title}\nmean over seeds, band: min to max")
        axis.title.set_fontsize(9)
        axis.set_xlabel("step")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        if runs:
            axis.legend(fontsize=8)
    if bars:
        # The error of one score (one seed's), at each bar's rate: the spread a single
        # evaluation has, which is what the dots of the seeds are compared against.
        errors = (
            [heldout.standard_error(statistics.fmean(v)) for v in bars.values()]
            if heldout is not None
            else None
        )
        title = f"held-out success ({heldout.describe()})" if heldout else "held-out"
        draw_bars(axes[-1], bars, title=title, errors=errors)
    figure.tight_layout()
    return save_figure(figure, png_path)


def write_ablation(
    runs: Sequence[AblationRun],
    output_dir: Path,
    *,
    start: HeldoutScore | None = None,
    heldout: Heldout | None = None,
    floor: str | None = None,
    contrasts: Sequence[tuple[str, str]] = (),
    families: Mapping[str, str] | None = None,
) -> None:
    """Write ``ablation.json``, ``ablation.md`` and ``ablation.png`` to ``output_dir``.

    Args:
        runs: Every run, complete or not.
        output_dir: Where the files go.
        start: The starting policy's held-out score.
        heldout: How held-out success was measured.
        floor: The arm the others are paired against (default: the first run's estimator).
        contrasts: ``(arm, reference)`` pairs also compared directly (same reward information).
        families: Held-out task id → family, for the per-family table.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    complete = [run for run in runs if run.complete]
    table = ablation_table(complete, start=start, heldout=heldout)
    incomplete = [run for run in runs if not run.complete]
    if incomplete:
        listed = ", ".join(
            f"{run.estimator} seed {run.seed} ({run.steps}/{run.target_steps} steps)"
            for run in incomplete
        )
        table += f"\nIncomplete runs, not pooled above: {listed}.\n"
    by_depth = depth_table(complete, start=start)
    if by_depth:
        table += "\n" + by_depth
    floor = floor or (runs[0].estimator if runs else "")
    arms = arm_results(runs, floor=floor, start=start, families=families)
    contrasted = contrast_results(runs, contrasts)
    if any(run.heldout is not None for run in runs):
        by_family = family_table(arms)
        compared = contrasts_table(contrasted)
        table = (
            arms_table(arms, floor=floor, start=start)
            + ("\n" + compared if compared else "")
            + ("\n" + by_family if by_family else "")
            + "\nTraining curves and means over seeds (mean ± std):\n\n"
            + table
        )
    payload = {
        "runs": [run.model_dump() for run in runs],
        "floor": floor,
        "arms": [arm.model_dump(mode="json") for arm in arms],
        "contrasts": [contrast.model_dump(mode="json") for contrast in contrasted],
        "start_heldout_success": start.success if start is not None else None,
        "start_heldout_per_task": start.per_task if start is not None else None,
        "start_heldout_by_depth": (start.model_dump()["by_depth"] if start is not None else None),
        "heldout": heldout.model_dump() if heldout is not None else None,
        "table": table,
    }
    (output_dir / "ablation.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    (output_dir / "ablation.md").write_text(table, encoding="utf-8")
    plot_ablation(complete, output_dir / "ablation.png", start=start, heldout=heldout)

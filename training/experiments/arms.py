"""Arms compared at the seed level: held-out success with intervals over seeds, paired vs a floor.

An ablation arm is one advantage estimator run with several seeds from the same start, the same
steps and the same held-out ``dev`` tasks. The unit of replication is the seed: a seed's whole run
(its rollouts, its updates, its held-out draw) is one sample of what the arm does, so intervals
are taken over seeds — Student-t intervals of the mean (:func:`seed_interval`), never over the
episodes of one run. Comparisons pair what the design pairs:

- **vs the floor arm, by seed**: the arm and the floor run with seed ``s`` draw the same training
  tasks in the same order and are scored on the same held-out tasks, so ``d_s`` is the mean over
  tasks of (arm − floor) success for seed ``s``; the interval is the t interval over the ``d_s``.
- **vs the floor arm, by task**: each task's success averaged over the seeds, then a paired
  bootstrap over tasks (:func:`~.heldout.paired_difference`): the task-level view, narrower, and
  blind to seed-to-seed variation.
- **contrasts**: an arm against another that sees the same reward information (``multilevel`` vs
  ``grpo_summed``: decoupled vs joint normalization), by seed and by task as above.
- **vs the start**: each seed's final minus the start's score on the same tasks, over seeds; it
  decides the verdict (``learned``, ``worse than the start`` or ``no evidence it learned``).

Only complete runs (every planned step logged, :attr:`~.ablation_report.AblationRun.complete`)
are pooled; incomplete ones are listed apart.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from paraagent_runtime.intervals import Interval

from .heldout import HeldoutScore, format_paired, paired_difference

if TYPE_CHECKING:
    from .ablation_report import AblationRun

__all__ = [
    "MIN_SEEDS",
    "ArmResult",
    "Contrast",
    "arm_results",
    "arms_table",
    "contrast_results",
    "contrasts_table",
    "family_table",
    "seed_interval",
]

MIN_SEEDS = 3
"""Complete seeds an arm needs before its intervals are worth reading (the issue's minimum)."""


class ArmResult(BaseModel):
    """One arm's held-out outcome over its complete seeds.

    Attributes:
        arm: The advantage estimator.
        seeds: The complete seeds pooled, in order.
        incomplete: Runs left out, as ``seed 2: 7/10 steps``.
        steps: Steps of every pooled run (they are equal).
        success: Mean held-out success over seeds, t 95% interval over seeds.
        facts: The same for the share of gold facts the answers state.
        vs_start: Mean over seeds of (final − start) success, t interval over seeds.
        facts_vs_start: The same for the share of gold facts stated.
        vs_floor: Mean over seeds of the seed-paired (arm − floor) success, t interval.
        vs_floor_by_task: (arm − floor) success paired by task, seeds averaged per task.
        facts_vs_floor: The seed-paired (arm − floor) difference in facts stated.
        by_family: Held-out success per task family, t interval over seeds.
        verdict: ``learned``, ``worse than the start``, ``no evidence it learned`` or ``-``.
    """

    arm: str
    seeds: list[int]
    incomplete: list[str]
    steps: int | None
    success: Interval | None = None
    facts: Interval | None = None
    vs_start: Interval | None = None
    facts_vs_start: Interval | None = None
    vs_floor: Interval | None = None
    vs_floor_by_task: Interval | None = None
    facts_vs_floor: Interval | None = None
    by_family: dict[str, Interval] = {}
    verdict: str = "-"


class Contrast(BaseModel):
    """One arm paired against another that sees the same reward information.

    What the estimator alone changes (for the decoupling arms: joint vs per-level normalization).

    Attributes:
        arm: The arm measured.
        reference: The arm it is paired against.
        seeds: Seeds both arms completed and scored (the pairs pooled).
        by_seed: Mean over seeds of the seed-paired (arm − reference) success (t interval).
        by_task: (arm − reference) success paired by task, seeds averaged per task.
        facts_by_seed: The seed-paired (arm − reference) difference in facts stated.
    """

    arm: str
    reference: str
    seeds: list[int]
    by_seed: Interval | None = None
    by_task: Interval | None = None
    facts_by_seed: Interval | None = None


def _complete_runs(runs: Sequence[AblationRun]) -> dict[str, dict[int, HeldoutScore | None]]:
    """Arm → seed → held-out score (``None``: not scored) of the arm's complete runs."""
    return {
        arm: {run.seed: run.heldout for run in runs if run.estimator == arm and run.complete}
        for arm in dict.fromkeys(run.estimator for run in runs)
    }


def _scored(
    complete: Mapping[str, Mapping[int, HeldoutScore | None]],
) -> dict[str, dict[int, HeldoutScore]]:
    return {
        arm: {seed: score for seed, score in seeds.items() if score is not None}
        for arm, seeds in complete.items()
    }


def seed_interval(values: Sequence[float], *, rate: bool = False) -> Interval:
    """The mean of per-seed values with its Student-t 95% interval.

    With a handful of seeds a percentile bootstrap cannot reach past the extreme seeds and is far
    too narrow; the t interval widens with the few degrees of freedom (3 seeds: ±4.3 standard
    errors). ``rate``: the values are rates, so the interval is clipped to [0, 1]. Over one seed
    the interval is the value itself (``n = 1``: no interval).
    """
    from scipy.stats import t as student_t

    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return Interval(mean, mean, mean, n)
    half = student_t.ppf(0.975, n - 1) * statistics.stdev(values) / n**0.5
    low, high = mean - half, mean + half
    if rate:
        low, high = max(0.0, low), min(1.0, high)
    return Interval(mean, low, high, n)


def _over_seeds(values: Sequence[float], *, rate: bool = False) -> Interval | None:
    return seed_interval(values, rate=rate) if values else None


def _task_mean(score: HeldoutScore, tasks: Sequence[str], attribute: str) -> float:
    per_task = getattr(score, attribute) or {}
    return statistics.fmean(per_task[task] for task in tasks)


def _shared_tasks(first: HeldoutScore, second: HeldoutScore, attribute: str) -> list[str]:
    return sorted(set(getattr(first, attribute) or ()) & set(getattr(second, attribute) or ()))


def _seed_paired(
    scored: Mapping[int, HeldoutScore], floor: Mapping[int, HeldoutScore], attribute: str
) -> Interval | None:
    differences = []
    for seed in sorted(scored.keys() & floor.keys()):
        tasks = _shared_tasks(scored[seed], floor[seed], attribute)
        if tasks:
            mine = _task_mean(scored[seed], tasks, attribute)
            differences.append(mine - _task_mean(floor[seed], tasks, attribute))
    return _over_seeds(differences)


def _by_task(
    scored: Mapping[int, HeldoutScore], floor: Mapping[int, HeldoutScore]
) -> Interval | None:
    if not scored or not floor:
        return None
    floor_tasks = [score.per_task for score in floor.values()]
    if any(tasks is None for tasks in floor_tasks):
        return None
    keys = set.intersection(*(set(tasks or ()) for tasks in floor_tasks))
    floor_mean = {t: statistics.fmean((tasks or {})[t] for tasks in floor_tasks) for t in keys}
    return paired_difference([score.per_task for score in scored.values()], floor_mean)


def _family_success(
    scored: Mapping[int, HeldoutScore], families: Mapping[str, str]
) -> dict[str, Interval]:
    result: dict[str, Interval] = {}
    for family in dict.fromkeys(families.values()):
        values = []
        for score in scored.values():
            per_task = (score.per_task or {}).items()
            rates = [rate for task, rate in per_task if families.get(task) == family]
            if rates:
                values.append(statistics.fmean(rates))
        if values:
            result[family] = seed_interval(values, rate=True)
    return result


def _verdict(vs_start: Interval | None) -> str:
    if vs_start is None or vs_start.n < 2:
        return "-"
    if vs_start.low > 0:
        return "learned"
    if vs_start.high < 0:
        return "worse than the start"
    return "no evidence it learned"


def arm_results(
    runs: Sequence[AblationRun],
    *,
    floor: str,
    start: HeldoutScore | None = None,
    families: Mapping[str, str] | None = None,
) -> list[ArmResult]:
    """Each arm's held-out outcome over its complete seeds, paired against ``floor`` and the start.

    Args:
        runs: Every run of the ablation (incomplete ones are listed, not pooled).
        floor: The arm every other one is compared to (trajectory-only ``grpo``).
        start: The starting policy's held-out score on the same tasks.
        families: Task id → family of the held-out tasks (``None``: no per-family split).
    """
    complete = _complete_runs(runs)
    scored_by_arm = _scored(complete)
    floor_scores = scored_by_arm.get(floor, {})
    results = []
    for arm, seeds in complete.items():
        scored = scored_by_arm[arm]
        pooled = [run for run in runs if run.estimator == arm and run.complete]
        vs_start = facts_vs_start = None
        if start is not None:
            starts = dict.fromkeys(scored, start)
            vs_start = _seed_paired(scored, starts, "per_task")
            facts_vs_start = _seed_paired(scored, starts, "facts_per_task")
        compared = arm != floor
        results.append(
            ArmResult(
                arm=arm,
                seeds=sorted(seeds),
                incomplete=[
                    f"seed {run.seed}: {run.steps}/{run.target_steps} steps"
                    for run in runs
                    if run.estimator == arm and not run.complete
                ],
                steps=pooled[0].steps if pooled else None,
                success=_over_seeds([score.success for score in scored.values()], rate=True),
                facts=_over_seeds(
                    [score.facts for score in scored.values() if score.facts is not None],
                    rate=True,
                ),
                vs_start=vs_start,
                facts_vs_start=facts_vs_start,
                vs_floor=_seed_paired(scored, floor_scores, "per_task") if compared else None,
                vs_floor_by_task=_by_task(scored, floor_scores) if compared else None,
                facts_vs_floor=(
                    _seed_paired(scored, floor_scores, "facts_per_task") if compared else None
                ),
                by_family=_family_success(scored, families or {}),
                verdict=_verdict(vs_start),
            )
        )
    return results


def _cell(interval: Interval | None, signed: bool = False) -> str:
    """An interval as a cell; over one seed only the value (one seed gives no interval)."""
    if interval is None:
        return "-"
    if interval.n < 2:
        value = f"{interval.estimate:+.3f}" if signed else f"{interval.estimate:.3f}"
        return f"{value} (1 seed)"
    if signed:
        return format_paired(interval)
    return f"{interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def arms_table(
    results: Sequence[ArmResult], *, floor: str, start: HeldoutScore | None = None
) -> str:
    """The arms side by side as markdown, with a note on what each interval is over."""
    lines = [
        f"| arm | complete seeds | steps | held-out success | Δ vs {floor} (by seed) "
        f"| Δ vs {floor} (by task) | facts stated | Δ facts vs {floor} (by seed) "
        "| Δ vs start (by seed) | Δ facts vs start (by seed) | verdict | incomplete (not pooled) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    if start is not None:
        facts = "-" if start.facts is None else f"{start.facts:.3f}"
        lines.append(
            f"| start (no RL) | - | 0 | {start.success:.3f} | - | - | {facts} | - | - | - | - | - |"
        )
    for result in results:
        lines.append(
            f"| {result.arm} | {','.join(map(str, result.seeds)) or '-'} "
            f"| {result.steps if result.steps is not None else '-'} "
            f"| {_cell(result.success)} | {_cell(result.vs_floor, True)} "
            f"| {_cell(result.vs_floor_by_task, True)} | {_cell(result.facts)} "
            f"| {_cell(result.facts_vs_floor, True)} | {_cell(result.vs_start, True)} "
            f"| {_cell(result.facts_vs_start, True)} | {result.verdict} "
            f"| {'; '.join(result.incomplete) or '-'} |"
        )
    few = [r.arm for r in results if len(r.seeds) < MIN_SEEDS]
    note = (
        "Intervals are 95% Student-t intervals over seeds (each seed's whole run is one sample;"
        f" with {MIN_SEEDS} seeds ±4.3 standard errors), except 'by task': seeds averaged per"
        " task, paired bootstrap over the tasks (blind to seed variance). 'By seed' pairs each"
        f" arm's seed-s run with {floor}'s seed-s run (same torch seed and held-out tasks; every"
        " run trains on the same tasks in the same order, so seeds differ in sampling only)."
        " Verdict from Δ success vs start: its interval above 0 (learned), below 0 (worse than"
        " the start) or across 0 (no evidence it learned)."
    )
    if few:
        note += f" Fewer than {MIN_SEEDS} complete seeds: {', '.join(few)}."
    return "\n".join([*lines, "", note]) + "\n"


def family_table(results: Sequence[ArmResult]) -> str:
    """Held-out success per family and arm (mean over seeds [t interval over seeds]), as markdown.

    Empty when no arm has a per-family split.
    """
    families = list(dict.fromkeys(f for result in results for f in result.by_family))
    if not families:
        return ""
    lines = ["| arm | " + " | ".join(families) + " |", "|---|" + "---|" * len(families)]
    for result in results:
        cells = [_cell(result.by_family.get(family)) for family in families]
        lines.append(f"| {result.arm} | " + " | ".join(cells) + " |")
    note = "Held-out success per task family: mean over complete seeds [t interval over seeds]."
    return "\n".join([*lines, "", note]) + "\n"


def contrast_results(
    runs: Sequence[AblationRun], pairs: Sequence[tuple[str, str]]
) -> list[Contrast]:
    """Each ``(arm, reference)`` pair compared on the seeds both completed and scored.

    A pair whose arms share no scored seed is left out.
    """
    scored_by_arm = _scored(_complete_runs(runs))
    results = []
    for arm, reference in pairs:
        mine, theirs = scored_by_arm.get(arm, {}), scored_by_arm.get(reference, {})
        seeds = sorted(mine.keys() & theirs.keys())
        if not seeds:
            continue
        mine = {seed: mine[seed] for seed in seeds}
        theirs = {seed: theirs[seed] for seed in seeds}
        results.append(
            Contrast(
                arm=arm,
                reference=reference,
                seeds=seeds,
                by_seed=_seed_paired(mine, theirs, "per_task"),
                by_task=_by_task(mine, theirs),
                facts_by_seed=_seed_paired(mine, theirs, "facts_per_task"),
            )
        )
    return results


def contrasts_table(results: Sequence[Contrast]) -> str:
    """The contrasts as markdown (empty without any), with what each interval is over."""
    if not results:
        return ""
    lines = [
        "| contrast | seeds | Δ success (by seed) | Δ success (by task) | Δ facts (by seed) |",
        "|---|---|---|---|---|",
    ]
    for result in results:
        lines.append(
            f"| {result.arm} − {result.reference} | {','.join(map(str, result.seeds))} "
            f"| {_cell(result.by_seed, True)} | {_cell(result.by_task, True)} "
            f"| {_cell(result.facts_by_seed, True)} |"
        )
    note = (
        "Arms that see the same reward information, paired as above (by seed: seed-s run against"
        " seed-s run, t interval over seeds; by task: seeds averaged per task, paired bootstrap"
        " over tasks). An interval across 0 is no evidence that the estimator alone matters."
    )
    return "\n".join([*lines, "", note]) + "\n"

"""Arms compared at the seed level: held-out success with intervals over seeds, paired vs a floor.

An ablation arm is one advantage estimator run with several seeds from the same start, the same
steps and the same held-out ``dev`` tasks. The unit of replication is the seed: a seed's whole run
(its rollouts, its updates, its held-out draw) is one sample of what the arm does, so intervals
are taken over seeds (:func:`~paraagent_runtime.intervals.bootstrap_mean`), never over the
episodes of one run. Comparisons pair what the design pairs:

- **vs the floor arm, by seed**: the arm and the floor run with seed ``s`` draw the same training
  tasks in the same order and are scored on the same held-out tasks, so ``d_s`` is the mean over
  tasks of (arm − floor) success for seed ``s``; the interval is the bootstrap over the ``d_s``.
- **vs the floor arm, by task**: each task's success averaged over the seeds, then a paired
  bootstrap over tasks (:func:`~.heldout.paired_difference`): the task-level view, narrower, and
  blind to seed-to-seed variation.
- **vs the start**: each seed's final minus the start's score on the same tasks, over seeds; it
  decides the verdict (``learned``, ``worse than the start`` or ``no evidence it learned``).

Only complete runs (every planned step logged, :attr:`~.ablation_report.AblationRun.complete`)
are pooled; incomplete ones are listed apart. With three seeds a percentile bootstrap cannot reach
past the extreme seeds: the intervals are optimistic, and the table says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from paraagent_runtime.intervals import Interval, bootstrap_mean

from .heldout import HeldoutScore, format_paired, paired_difference

if TYPE_CHECKING:
    from .ablation_report import AblationRun

__all__ = ["MIN_SEEDS", "ArmResult", "arm_results", "arms_table", "family_table"]

MIN_SEEDS = 3
"""Complete seeds an arm needs before its intervals are worth reading (the issue's minimum)."""


class ArmResult(BaseModel):
    """One arm's held-out outcome over its complete seeds.

    Attributes:
        arm: The advantage estimator.
        seeds: The complete seeds pooled, in order.
        incomplete: Runs left out, as ``seed 2: 7/10 steps``.
        steps: Steps of every pooled run (they are equal).
        success: Mean held-out success over seeds, bootstrap 95% interval over seeds.
        facts: The same for the share of gold facts the answers state.
        vs_start: Mean over seeds of (final − start) success, bootstrap over seeds.
        facts_vs_start: The same for the share of gold facts stated.
        vs_floor: Mean over seeds of the seed-paired (arm − floor) success, bootstrap over seeds.
        vs_floor_by_task: (arm − floor) success paired by task, seeds averaged per task.
        facts_vs_floor: The seed-paired (arm − floor) difference in facts stated.
        by_family: Held-out success per task family, bootstrap over seeds.
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


def _over_seeds(values: Sequence[float]) -> Interval | None:
    return bootstrap_mean(values) if values else None


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
            result[family] = bootstrap_mean(values)
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
    complete = {
        arm: {run.seed: run.heldout for run in runs if run.estimator == arm and run.complete}
        for arm in dict.fromkeys(run.estimator for run in runs)
    }
    scored_by_arm = {
        arm: {seed: score for seed, score in seeds.items() if score is not None}
        for arm, seeds in complete.items()
    }
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
                success=_over_seeds([score.success for score in scored.values()]),
                facts=_over_seeds(
                    [score.facts for score in scored.values() if score.facts is not None]
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
    """An interval as a cell; over one seed only the value (a bootstrap of one is no interval)."""
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
        "Intervals are 95% percentile bootstraps over seeds (each seed's whole run is one sample;"
        f" {MIN_SEEDS} seeds cannot reach past the extreme seeds, so these are optimistic), except"
        " 'by task': seeds averaged per task, paired bootstrap over the tasks. 'By seed' pairs each"
        f" arm's seed-s run with {floor}'s seed-s run (same torch seed and held-out tasks; every"
        " run trains on the same tasks in the same order, so seeds differ in sampling only)."
        " Verdict from Δ success vs start: its interval above 0 (learned), below 0 (worse than"
        " the start) or across 0 (no evidence it learned)."
    )
    if few:
        note += f" Fewer than {MIN_SEEDS} complete seeds: {', '.join(few)}."
    return "\n".join([*lines, "", note]) + "\n"


def family_table(results: Sequence[ArmResult]) -> str:
    """Held-out success per family and arm (mean over seeds [bootstrap over seeds]), as markdown.

    Empty when no arm has a per-family split.
    """
    families = list(dict.fromkeys(f for result in results for f in result.by_family))
    if not families:
        return ""
    lines = ["| arm | " + " | ".join(families) + " |", "|---|" + "---|" * len(families)]
    for result in results:
        cells = [_cell(result.by_family.get(family)) for family in families]
        lines.append(f"| {result.arm} | " + " | ".join(cells) + " |")
    note = "Held-out success per task family: mean over complete seeds [bootstrap over seeds]."
    return "\n".join([*lines, "", note]) + "\n"

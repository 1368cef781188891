"""Pool several held-out evaluations of the same policies and compare them, paired by task.

One sampled evaluation (12 tasks × 4 episodes) is noisy: the same start policy scored 0.083 in one
draw and 0.146 in the next, on the same 12 tasks. Pooling every evaluation of a policy (an
ablation's ``heldout.jsonl``, a ``train eval`` trajectory file, another seed's final) and pairing
each task against a baseline gives a difference whose paired-bootstrap 95% interval narrows with
every draw added. ``paraagent train rl pool`` is the command line.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from paraagent_runtime import ConfigError, EpisodeMetrics
from paraagent_runtime.intervals import Interval
from paraagent_runtime.plotting import pyplot, save_figure
from training.evaluate import optional_cell, read_metrics

from .heldout import HeldoutScore, format_paired, paired_difference
from .plot import draw_bars

__all__ = [
    "EpisodeSource",
    "FamilyResult",
    "PooledPolicy",
    "plot_pooled",
    "pool_evaluations",
    "pooled_family_table",
    "pooled_table",
]


@dataclass(frozen=True)
class EpisodeSource:
    """One evaluation's episodes of one policy.

    Attributes:
        label: The policy's name in the comparison; sources with the same label are pooled.
        path: An episodes file whose episodes carry their metrics (``metadata.metrics``).
        policy: Keep only episodes whose ``metadata.policy`` is this (a ``train eval`` file holds
            every policy it evaluated); ``None`` keeps all.
    """

    label: str
    path: Path
    policy: str | None = None

    @classmethod
    def parse(cls, spec: str) -> EpisodeSource:
        """``LABEL=PATH`` or ``LABEL=PATH@POLICY``.

        Raises:
            ConfigError: no ``=``, or an empty label, path or policy.
        """
        label, sep, rest = spec.partition("=")
        path, at, policy = rest.partition("@")
        if not sep or not label.strip() or not path.strip() or (at and not policy.strip()):
            raise ConfigError(f"episodes {spec!r}: expected LABEL=PATH or LABEL=PATH@POLICY")
        return cls(label.strip(), Path(path.strip()), policy.strip() if at else None)

    def read(self) -> list[EpisodeMetrics]:
        """The metrics of the source's episodes (:func:`~training.evaluate.read_metrics`)."""
        return read_metrics(self.path, policy=self.policy)


Paired = Interval | None


class FamilyResult(BaseModel):
    """One label's pooled episodes of one task family and their paired difference to the baseline.

    A mixture's overall score can hide a family that regresses behind one that improves; this is
    the per-family view of :class:`PooledPolicy`.

    Attributes:
        episodes: Episodes of the family pooled over the sources.
        success: Their success.
        facts: Their mean share of gold facts stated.
        paired_tasks: Tasks of the family both this policy and the baseline were evaluated on.
        success_delta: Paired difference in success over those tasks, with its 95% interval.
        facts_delta: The same for the share of gold facts stated.
    """

    episodes: int
    success: float
    facts: float
    paired_tasks: int
    success_delta: Paired = None
    facts_delta: Paired = None


class PooledPolicy(BaseModel):
    """One label's pooled evaluations and their paired difference to the baseline.

    Attributes:
        label: The policy's label.
        evaluations: Success of each source on its own, in the order given.
        evaluation_facts: The share of gold facts stated in each source.
        episodes: Episodes pooled over the sources.
        score: The score of every episode of every source together.
        paired_tasks: Tasks both this policy and the baseline were evaluated on.
        success_delta: Mean over those tasks of (policy − baseline) success, and its paired
            bootstrap 95% interval (``None`` for the baseline itself or with fewer than two
            shared tasks).
        facts_delta: The same for the share of gold facts the answers state.
        by_family: The same comparison per task family, in first-seen order.
    """

    label: str
    evaluations: list[float]
    evaluation_facts: list[float]
    episodes: int
    score: HeldoutScore
    paired_tasks: int
    success_delta: Paired = None
    facts_delta: Paired = None
    by_family: dict[str, FamilyResult] = {}


def _paired(score: HeldoutScore, base: HeldoutScore, tasks: set[str], per_task: str) -> Paired:
    """:func:`paired_difference` of ``per_task`` rates over the shared ``tasks`` only."""
    final, start = getattr(score, per_task), getattr(base, per_task)
    if final is None or start is None:
        return None
    return paired_difference([{t: final[t] for t in tasks}], {t: start[t] for t in tasks})


def _deltas(
    score: HeldoutScore, base: HeldoutScore, tasks: set[str], compared: bool
) -> tuple[Paired, Paired]:
    """Paired success and facts differences over ``tasks`` (none for the baseline itself)."""
    if not compared:
        return None, None
    return _paired(score, base, tasks, "per_task"), _paired(score, base, tasks, "facts_per_task")


def _by_family(
    rows: Sequence[EpisodeMetrics], base: HeldoutScore, tasks: set[str], compared: bool
) -> dict[str, FamilyResult]:
    """Split one label's pooled ``rows`` by family and pair each family's shared ``tasks``."""
    families: dict[str, list[EpisodeMetrics]] = defaultdict(list)
    for row in rows:
        families[row.family].append(row)
    results = {}
    for family, family_rows in families.items():
        score = HeldoutScore.from_rows(family_rows)
        family_tasks = tasks & {row.task_id for row in family_rows}
        success_delta, facts_delta = _deltas(score, base, family_tasks, compared)
        results[family] = FamilyResult(
            episodes=len(family_rows),
            success=score.success,
            facts=score.facts or 0.0,
            paired_tasks=len(family_tasks),
            success_delta=success_delta,
            facts_delta=facts_delta,
        )
    return results


def pool_evaluations(sources: Sequence[EpisodeSource], *, baseline: str) -> list[PooledPolicy]:
    """Pool each label's sources and pair every label against ``baseline`` by task.

    Args:
        sources: Evaluations to pool; labels keep their first-seen order.
        baseline: The label every other label is compared to (usually the start policy).

    Raises:
        ConfigError: no source has the baseline label, or a source cannot be read.
    """
    if baseline not in {source.label for source in sources}:
        raise ConfigError(f"pool: no episodes labelled {baseline!r} (the baseline)")
    rows: dict[str, list[EpisodeMetrics]] = defaultdict(list)
    evaluations: dict[str, list[HeldoutScore]] = defaultdict(list)
    for source in sources:
        source_rows = source.read()
        rows[source.label].extend(source_rows)
        evaluations[source.label].append(HeldoutScore.from_rows(source_rows))
    scores = {label: HeldoutScore.from_rows(label_rows) for label, label_rows in rows.items()}
    base = scores[baseline]
    pooled = []
    for label, score in scores.items():
        tasks = set(score.per_task or ()) & set(base.per_task or ())
        compared = label != baseline
        success_delta, facts_delta = _deltas(score, base, tasks, compared)
        pooled.append(
            PooledPolicy(
                label=label,
                evaluations=[each.success for each in evaluations[label]],
                evaluation_facts=[each.facts or 0.0 for each in evaluations[label]],
                episodes=len(rows[label]),
                score=score,
                paired_tasks=len(tasks),
                success_delta=success_delta,
                facts_delta=facts_delta,
                by_family=_by_family(rows[label], base, tasks, compared),
            )
        )
    return pooled


def pooled_table(policies: Sequence[PooledPolicy]) -> str:
    """A markdown table: per label its evaluations, pooled success and facts, paired Δs."""
    lines = [
        "| policy | evaluations (success each) | episodes | tasks paired | success "
        "| Δ success (paired) | facts stated | Δ facts (paired) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for policy in policies:
        cells = [
            policy.label,
            f"{len(policy.evaluations)} ({', '.join(f'{v:.3f}' for v in policy.evaluations)})",
            str(policy.episodes),
            str(policy.paired_tasks),
            f"{policy.score.success:.3f}",
            format_paired(policy.success_delta),
            optional_cell(policy.score.facts),
            format_paired(policy.facts_delta),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def pooled_family_table(policies: Sequence[PooledPolicy]) -> str:
    """A markdown table: per label and family, success (episodes) and its paired Δ to the baseline.

    Families are columns in first-seen order; a label without episodes of a family shows ``-``.
    """
    families = list(dict.fromkeys(family for p in policies for family in p.by_family))
    lines = [
        "| policy | " + " | ".join(families) + " |",
        "|---|" + "---|" * len(families),
    ]
    for policy in policies:
        cells = [policy.label]
        for family in families:
            result = policy.by_family.get(family)
            if result is None:
                cells.append("-")
                continue
            cell = f"{result.success:.3f} ({result.episodes})"
            if result.success_delta is not None:
                cell += f", Δ {format_paired(result.success_delta)}"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_pooled(policies: Sequence[PooledPolicy], png_path: Path) -> Path:
    """Pooled success and facts stated per policy (bars), each evaluation a dot, Δs annotated."""
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(4 + 1.6 * len(policies), 4))
    panels = (
        ("held-out success", "evaluations", "success_delta"),
        ("share of gold facts stated", "evaluation_facts", "facts_delta"),
    )
    for axis, (title, each, delta) in zip(axes, panels, strict=True):
        bars = {policy.label: getattr(policy, each) for policy in policies}
        notes = [
            "" if getattr(p, delta) is None else f"Δ {format_paired(getattr(p, delta))}"
            for p in policies
        ]
        draw_bars(axis, bars, title=f"{title} (dots: evaluations; Δ paired by task)", notes=notes)
    figure.tight_layout()
    return save_figure(figure, png_path)

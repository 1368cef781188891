"""One table of several policies over the ToolEnv splits, each beside a baseline, paired by task.

Reads evaluation files of ``paraagent eval toolenv --summary`` or ``paraagent train eval --out``
(see :func:`~mcp_servers.toolenv.evaluation.load_outcomes`), one or more per policy, and writes per
policy and split (and mode, when it is not the default one): success with its Wilson 95% interval,
format-error turns per episode, turns and calls; the hidden-need families pooled; and every
policy minus the baseline on the tasks both ran (paired bootstrap 95% intervals); then, per split,
the tasks each policy solved in every task family. Nothing is
evaluated here, so a table regenerates from the evaluation files alone:
``paraagent train table v2=A.json v1=B.json --baseline v1 --out docs/results/STEM``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from mcp_servers.toolenv.evaluation import compare_rows, load_outcomes
from mcp_servers.toolenv.hidden_needs import (
    HELD_OUT_HIDDEN_NEED_FAMILIES,
    HIDDEN_NEED_FAMILIES,
)
from paraagent_runtime import DEFAULT_MODE, ConfigError, EpisodeMetrics
from paraagent_runtime.intervals import Interval, wilson

__all__ = ["FamilyCount", "PolicyRow", "PolicyTable", "policy_table", "write_policy_table"]

HIDDEN_NEED = "hidden-need families"
"""The label of the row pooling a split's hidden-need families."""


def _hidden_need_families() -> frozenset[str]:
    held_out = {name for families in HELD_OUT_HIDDEN_NEED_FAMILIES.values() for name in families}
    return frozenset(HIDDEN_NEED_FAMILIES) | held_out


@dataclass(frozen=True)
class PolicyRow:
    """One policy on one split (or on that split's hidden-need families)."""

    policy: str
    split: str
    tasks: int
    success: Interval
    format_error_turns: float
    turns: float
    calls: float
    versus_baseline: Interval | None
    """Success of this policy minus the baseline's on the shared tasks (``None``: the baseline)."""
    paired_tasks: int


@dataclass(frozen=True)
class FamilyCount:
    """The tasks of one family one policy ran on one split, and how many it solved."""

    solved: int
    tasks: int


@dataclass(frozen=True)
class PolicyTable:
    """Every policy's rows, in the order the policies were given."""

    baseline: str
    rows: list[PolicyRow]
    sources: dict[str, list[str]]
    families: dict[str, dict[str, dict[str, FamilyCount]]]
    """Split → task family → policy → the family's tasks it ran and solved."""

    def markdown(self) -> str:
        """The table as markdown (success and differences in percentage points)."""
        lines = [
            f"| policy | split | tasks | success % [95% CI] | − {self.baseline} (pts, paired) "
            "| format-error turns / episode | turns | calls |",
            "|---|---|---:|---|---|---:|---:|---:|",
        ]
        for row in self.rows:
            difference = (
                "—"
                if row.versus_baseline is None
                else f"{_points(row.versus_baseline)} ({row.paired_tasks} tasks)"
            )
            lines.append(
                f"| {row.policy} | {row.split} | {row.tasks} | {_percent(row.success)} "
                f"| {difference} | {row.format_error_turns:.2f} | {row.turns:.2f} "
                f"| {row.calls:.2f} |"
            )
        policies = list(self.sources)
        for split, families in self.families.items():
            lines += [
                "",
                f"Solved per task family, {split}:",
                "",
                "| family | " + " | ".join(policies) + " |",
                "|---|" + "---:|" * len(policies),
            ]
            for family, counts in families.items():
                cells = [
                    f"{counts[name].solved}/{counts[name].tasks}" if name in counts else "—"
                    for name in policies
                ]
                lines.append(f"| {family} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"


def _percent(interval: Interval) -> str:
    return f"{100 * interval.estimate:.1f} [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def _points(interval: Interval) -> str:
    return f"{100 * interval.estimate:+.1f} [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}]"


def _key_of(path: Path, label: str, rows: Sequence[EpisodeMetrics]) -> str:
    """The row key of an evaluation group: its split, and its mode unless the default one.

    Labels are ``split mode`` (a ``--summary`` JSON) or ``model mode split`` (``train eval``).

    Raises:
        ConfigError: the label names no split (a ``report.json`` labels its groups by mode only).
    """
    words = label.split()
    if len(words) < 2:
        raise ConfigError(
            f"{path}: its episodes carry no split; give the --summary JSON of eval toolenv "
            "or the --out JSON of train eval"
        )
    split = words[0] if len(words) == 2 else words[-1]
    mode = rows[0].mode
    return split if mode == DEFAULT_MODE else f"{split} {mode}"


def _groups(paths: Sequence[Path]) -> dict[str, list[EpisodeMetrics]]:
    """Episodes by split (and mode) over ``paths``; one given twice is an error, not a merge."""
    groups: dict[str, list[EpisodeMetrics]] = {}
    for path in paths:
        for label, rows in load_outcomes(path).items():
            key = _key_of(path, label, rows)
            if key in groups:
                raise ConfigError(f"{path}: split {key!r} is already given by another file")
            groups[key] = rows
    return groups


def _row(
    policy: str,
    split: str,
    rows: Sequence[EpisodeMetrics],
    baseline: Sequence[EpisodeMetrics] | None,
) -> PolicyRow:
    versus, paired = None, 0
    if baseline is not None:
        shared = {row.task_id for row in rows} & {row.task_id for row in baseline}
        if shared:
            comparison = compare_rows(policy, rows, "baseline", baseline)
            versus, paired = comparison.differences["success"], comparison.tasks
    return PolicyRow(
        policy=policy,
        split=split,
        tasks=len(rows),
        success=wilson(sum(row.success for row in rows), len(rows)),
        format_error_turns=statistics.fmean(row.format_error_turns for row in rows),
        turns=statistics.fmean(row.turns for row in rows),
        calls=statistics.fmean(row.tool_calls for row in rows),
        versus_baseline=versus,
        paired_tasks=paired,
    )


def policy_table(policies: Mapping[str, Sequence[Path]], *, baseline: str) -> PolicyTable:
    """The table of ``policies`` (name → evaluation files), each split beside ``baseline``.

    Raises:
        ConfigError: ``baseline`` is not one of the policies, or a file cannot be read.
    """
    if baseline not in policies:
        raise ConfigError(f"--baseline {baseline!r} is none of the policies: {', '.join(policies)}")
    by_policy = {name: _groups(paths) for name, paths in policies.items()}
    hidden = _hidden_need_families()
    rows: list[PolicyRow] = []
    families: dict[str, dict[str, dict[str, FamilyCount]]] = {}
    for name, groups in by_policy.items():
        reference = by_policy[baseline] if name != baseline else {}
        for split, episodes in groups.items():
            for family in dict.fromkeys(row.family for row in episodes):
                ran = [row for row in episodes if row.family == family]
                families.setdefault(split, {}).setdefault(family, {})[name] = FamilyCount(
                    solved=sum(row.success for row in ran), tasks=len(ran)
                )
            base = reference.get(split) if name != baseline else None
            rows.append(_row(name, split, episodes, base))
            subset = [row for row in episodes if row.family in hidden]
            if subset and len(subset) < len(episodes):  # a hidden-need-only run is its own row
                base_subset = None if base is None else [r for r in base if r.family in hidden]
                rows.append(_row(name, f"{split}, {HIDDEN_NEED}", subset, base_subset))
    return PolicyTable(
        baseline=baseline,
        rows=rows,
        sources={name: [str(path) for path in paths] for name, paths in policies.items()},
        families=families,
    )


def write_policy_table(table: PolicyTable, stem: Path) -> tuple[Path, Path]:
    """Write ``stem``.md and ``stem``.json; returns both paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    markdown, data = stem.with_suffix(".md"), stem.with_suffix(".json")
    markdown.write_text(table.markdown(), encoding="utf-8")
    data.write_text(json.dumps(asdict(table), indent=1) + "\n", encoding="utf-8")
    return markdown, data

"""Held-out scoring of RL policies: what is evaluated, the score, and its on-disk cache.

The starting policy and each final policy of an ablation are evaluated on the same ``dev`` ToolEnv
tasks with the same decoding (:class:`Heldout`): comparing runs is model selection, so it never
looks at a test split (those are for reporting, ``paraagent train eval --split test-seen``). A
:class:`HeldoutScore` keeps the overall success, each task's rate (so finals pair with the start
task by task, :func:`paired_difference`, a seeded paired-bootstrap 95% interval), the share of
gold facts the answers state (partial credit, far less noisy than success on a few dozen
episodes), format errors, and success by gold call-graph depth (:class:`DepthScore`). Sampled
scores are cached beside the run under a key of everything they depend on (:func:`score_key`), so
a rerun reads them back instead of drawing them again.
"""

from __future__ import annotations

import json
import logging
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime import ConfigError, EpisodeMetrics, Task
from paraagent_runtime.intervals import Interval, paired_bootstrap_difference
from training.evaluate import check_eval_decoding, read_metrics
from training.rl.config import RLConfig

__all__ = [
    "HELDOUT",
    "DepthScore",
    "Heldout",
    "HeldoutScore",
    "cached_score",
    "format_paired",
    "heldout_tasks",
    "paired_difference",
    "save_score",
    "score_key",
]

logger = logging.getLogger(__name__)

HELDOUT = "dev"
"""The split runs are compared on: selection happens on ``dev``, never on a test split."""


class Heldout(BaseModel):
    """How the starting and the final policies are evaluated on held-out tasks.

    Attributes:
        tasks: ``dev`` tasks (from the RL config's ``task_families`` when set).
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
        """One line for the report, e.g. ``12 dev tasks, 4 samples at T=1.0``."""
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
        facts: Mean share of the task's gold facts the final answers state (the checker's score;
            ``None`` likewise).
        facts_per_task: That share per task id (``None`` likewise).
    """

    success: float
    per_task: dict[str, float] | None = None
    format_errors: float | None = None
    by_depth: dict[int, DepthScore] | None = None
    facts: float | None = None
    facts_per_task: dict[str, float] | None = None

    @classmethod
    def from_rows(cls, rows: Sequence[EpisodeMetrics]) -> HeldoutScore:
        """The score of evaluated episodes (several per task when sampled)."""
        by_task: dict[str, list[EpisodeMetrics]] = defaultdict(list)
        by_depth: dict[int, list[EpisodeMetrics]] = defaultdict(list)
        for row in rows:
            by_task[row.task_id].append(row)
            by_depth[row.gold_depth].append(row)
        return cls(
            success=statistics.fmean(row.success for row in rows) if rows else 0.0,
            per_task={
                task: statistics.fmean(row.success for row in group)
                for task, group in by_task.items()
            },
            facts=statistics.fmean(row.score for row in rows) if rows else 0.0,
            facts_per_task={
                task: statistics.fmean(row.score for row in group)
                for task, group in by_task.items()
            },
            format_errors=statistics.fmean(row.format_error_turns for row in rows) if rows else 0.0,
            by_depth={
                depth: DepthScore.from_rows(group) for depth, group in sorted(by_depth.items())
            },
        )

    @classmethod
    def from_episodes(cls, path: Path) -> HeldoutScore:
        """The score of an evaluation's episodes file (each episode carries its metrics)."""
        return cls.from_rows(read_metrics(path))


def heldout_tasks(config: RLConfig, count: int) -> list[Task]:
    """The ``count`` held-out tasks an ablation with ``config`` scores policies on."""
    return generate_tasks(
        count, seed=config.task_seed, split=HELDOUT, families=config.task_families
    )


def paired_difference(
    finals: Sequence[dict[str, float] | None], start: dict[str, float] | None
) -> Interval | None:
    """Mean over tasks of (final − start) success with a seeded paired-bootstrap 95% interval.

    Paired by task, so a task's difficulty cancels: the interval is that of the difference,
    narrower than two independent scores' when the same tasks are easy or hard for both policies.
    With several finals (seeds), each task's final rate is their mean. ``None`` unless every
    policy has per-task rates on the same tasks, at least two of them.
    """
    if start is None or not finals or any(f is None or f.keys() != start.keys() for f in finals):
        return None
    if len(start) < 2:
        return None
    tasks = sorted(start)
    final_rates = [
        statistics.fmean(final[task] for final in finals if final is not None) for task in tasks
    ]
    return paired_bootstrap_difference(final_rates, [start[task] for task in tasks])


def format_paired(paired: Interval | None) -> str:
    """A paired difference as ``+0.052 [-0.010, +0.115]`` (``-`` when there is none)."""
    if paired is None:
        return "-"
    return f"{paired.estimate:+.3f} [{paired.low:+.3f}, {paired.high:+.3f}]"


def score_key(
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


_FROM_EPISODES = ("by_depth", "facts", "facts_per_task")


def cached_score(path: Path, key: dict[str, Any], episodes: Path) -> HeldoutScore | None:
    """The score stored at ``path`` for exactly ``key`` (sampled scores are not re-drawn).

    A score cached before ``by_depth`` or the facts were kept gets them from the evaluation's
    ``episodes`` file when that is still there.
    """
    if not path.is_file():
        return None
    cached = json.loads(path.read_text(encoding="utf-8"))
    if cached.get("key") != key:
        return None
    score = HeldoutScore(
        success=cached["heldout_success"],
        per_task=cached.get("per_task"),
        format_errors=cached.get("format_errors"),
        by_depth=cached.get("by_depth"),
        facts=cached.get("facts"),
        facts_per_task=cached.get("facts_per_task"),
    )
    missing = [name for name in _FROM_EPISODES if getattr(score, name) is None]
    if missing and episodes.is_file():
        try:
            recomputed = HeldoutScore.from_episodes(episodes)
        except ConfigError as exc:
            logger.warning("%s: no %s (%s)", episodes, ", ".join(missing), exc)
        else:
            score = score.model_copy(update={name: getattr(recomputed, name) for name in missing})
    return score


def save_score(path: Path, key: dict[str, Any], score: HeldoutScore) -> None:
    """Cache ``score`` at ``path`` under ``key`` (read back by :func:`cached_score`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "key": key,
        "split": HELDOUT,
        "heldout_success": score.success,
        "per_task": score.per_task,
        "format_errors": score.format_errors,
        "by_depth": score.model_dump()["by_depth"],
        "facts": score.facts,
        "facts_per_task": score.facts_per_task,
    }
    path.write_text(json.dumps(payload) + "\n", encoding="utf-8")

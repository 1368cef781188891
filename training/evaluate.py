"""Evaluate trained policies on ToolEnv tasks: one summary row per (model, mode, split).

The episodes run through ToolEnv's evaluator (:func:`~mcp_servers.toolenv.evaluation.
evaluate_toolenv`, the one behind ``paraagent eval toolenv``) with the runtime's agent loop,
greedily unless a temperature is given; this module reduces its per-episode metrics to the
columns training reports compare:
success (ToolEnv checker), answered, turns, calls, calls per execute turn, format-error turns and
the simulated tool time (per turn the slowest call, since a turn's calls run in parallel), with
95% intervals over tasks (Wilson for success, bootstrap for means; see
:func:`~mcp_servers.toolenv.evaluation.metric_intervals`). A summary keeps its per-episode
outcomes, so two evaluations on the same tasks compare paired by task
(``paraagent eval toolenv --compare``).
Every evaluated episode carries its metrics (``metadata.metrics``); :func:`read_evaluated` reads an
evaluation's episodes file back (RL replay draws from one).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mcp_servers.toolenv.evaluation import (
    EnvFactory,
    EvalConfig,
    evaluate_toolenv,
    metric_intervals,
)
from paraagent_runtime import (
    DEFAULT_MAX_REPEATED_TURNS,
    DEFAULT_MAX_TURNS,
    SPLITS,
    ConfigError,
    Episode,
    EpisodeMetrics,
    Policy,
    SamplingParams,
    Task,
    TrajectoryWriter,
    read_episodes,
)
from paraagent_runtime.intervals import Interval

__all__ = [
    "SUMMARY_COLUMNS",
    "EvalSummary",
    "check_eval_decoding",
    "evaluate_policy",
    "optional_cell",
    "read_evaluated",
    "read_metrics",
    "summaries_markdown",
    "summarize_rows",
    "summary_cells",
]


class EvalSummary(BaseModel):
    """Aggregates over a task set.

    ``episodes`` exceeds ``tasks`` when each task is sampled several times (summaries saved
    before it existed read back with ``episodes == tasks``). ``facts_stated`` is the mean share
    of each task's gold facts the final answers state: partial credit, a finer measure than
    success on a few dozen episodes (``None`` in summaries saved before it existed).
    ``intervals`` holds 95% intervals over tasks (``success`` and
    :data:`~mcp_servers.toolenv.evaluation.MEAN_METRICS`) and ``outcomes`` every episode's
    metrics (both empty in summaries saved before they existed).
    """

    model: str
    mode: str
    tasks: int
    episodes: int = 0
    success_rate: float
    facts_stated: float | None = None
    mean_turns: float
    mean_calls: float
    calls_per_execute_turn: float
    format_error_turns: int
    answered: int
    mean_sim_tools_s: float
    mean_loaded_tools: float | None = None
    intervals: dict[str, Interval] = {}
    outcomes: list[EpisodeMetrics] = []

    def model_post_init(self, context: Any, /) -> None:
        """Fill ``episodes`` in summaries saved before sampled evaluation existed."""
        if self.episodes == 0:
            self.episodes = self.tasks


def summarize_rows(model: str, rows: Sequence[EpisodeMetrics], *, mode: str) -> EvalSummary:
    """Aggregate per-episode metrics of ``model`` run in agent ``mode`` into a summary."""
    executes = sum(row.execute_turns for row in rows)
    execute_calls = sum(row.execute_calls for row in rows)

    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 3) if values else 0.0

    return EvalSummary(
        model=model,
        mode=mode,
        tasks=len({row.task_id for row in rows}),
        episodes=len(rows),
        success_rate=mean([float(row.success) for row in rows]),
        facts_stated=mean([row.score for row in rows]),
        mean_turns=mean([row.turns for row in rows]),
        mean_calls=mean([row.tool_calls for row in rows]),
        calls_per_execute_turn=round(execute_calls / executes, 3) if executes else 0.0,
        format_error_turns=sum(row.format_error_turns for row in rows),
        answered=sum(1 for row in rows if row.status == "answered"),
        mean_sim_tools_s=mean([row.sim_tools_s for row in rows]),
        mean_loaded_tools=mean([row.loaded_tools for row in rows]),
        intervals=metric_intervals(rows) if rows else {},
        outcomes=list(rows),
    )


def check_eval_decoding(samples: int, temperature: float, *, owner: str = "evaluation") -> None:
    """Raise ConfigError unless ``samples`` episodes per task at ``temperature`` make sense.

    Both must be >= 1 and >= 0, and several samples of one task need a temperature > 0 (greedy
    ones would only repeat). ``owner`` (a function, a config or the flags) starts the message.
    """
    if samples < 1 or not temperature >= 0:
        raise ConfigError(
            f"{owner}: need samples >= 1 and temperature >= 0, got {samples}, {temperature}"
        )
    if samples > 1 and temperature == 0:
        raise ConfigError(f"{owner}: several samples per task need a temperature > 0")


async def evaluate_policy(
    policy: Policy,
    tasks: Sequence[Task],
    *,
    model: str,
    mode: str = "paraact",
    max_turns: int = DEFAULT_MAX_TURNS,
    max_repeated_turns: int = DEFAULT_MAX_REPEATED_TURNS,
    max_tokens: int = 256,
    temperature: float = 0.0,
    samples: int = 1,
    trajectory: TrajectoryWriter | None = None,
    on_row: Callable[[EpisodeMetrics], Any] | None = None,
    concurrency: int = 1,
    env_factory: EnvFactory | None = None,
) -> tuple[EvalSummary, list[EpisodeMetrics]]:
    """Run ``policy`` on every task in the task's ToolEnv world (greedy unless ``temperature``).

    With a ``temperature``, every task can run ``samples`` times; the success rate is then the
    mean over all those episodes (a finer measure than one greedy episode per task, and the
    quantity RL at that temperature optimizes). ``concurrency`` episodes run at once (a local
    model batches their turns); rows, ``on_row`` and the episodes written to ``trajectory`` stay
    in task order. ``env_factory`` builds each task's environment (default: the built-in
    catalog's; catalog tasks use :func:`~mcp_servers.toolenv.catalog_tasks.catalog_task_env`).

    Returns:
        The summary and one row per episode.

    Raises:
        ConfigError: ``concurrency`` is below 1, an unknown mode, or a decoding that
            :func:`check_eval_decoding` rejects.
    """
    check_eval_decoding(samples, temperature)
    tasks = [task for task in tasks for _ in range(samples)]
    if not tasks:
        return summarize_rows(model, [], mode=mode), []
    config = EvalConfig(
        policy=model,
        modes=[mode],  # type: ignore[list-item]
        # Only a label here (the tasks are given); custom split labels report as train.
        split=tasks[0].split if tasks[0].split in SPLITS else "train",
        n=len(tasks),
        max_turns=max_turns,
        max_repeated_turns=max_repeated_turns,
        sampling=SamplingParams(max_tokens=max_tokens, temperature=temperature),
        concurrency=concurrency,
    )
    report = await evaluate_toolenv(
        config,
        lambda task, mode: policy,
        tasks=tasks,
        on_episode=on_row,
        trajectory=trajectory,
        env_factory=env_factory,
    )
    return summarize_rows(model, report.episodes, mode=mode), report.episodes


def read_metrics(path: Path, *, policy: str | None = None) -> list[EpisodeMetrics]:
    """The metrics an evaluation's episodes carry (``metadata.metrics``).

    Args:
        path: An episodes file of an evaluation (an ablation's or ``train eval``'s).
        policy: Keep only episodes whose ``metadata.policy`` is this (a ``train eval`` file holds
            every policy it evaluated); ``None`` keeps all.

    Raises:
        ConfigError: as :func:`read_evaluated`.
    """
    return [metrics for _, metrics in read_evaluated(path, policy=policy)]


def read_evaluated(
    path: Path, *, policy: str | None = None
) -> list[tuple[Episode, EpisodeMetrics]]:
    """An evaluation's episodes, each with the metrics it carries (``metadata.metrics``).

    Args:
        path: An episodes file of an evaluation (an ablation's or ``train eval``'s).
        policy: Keep only episodes whose ``metadata.policy`` is this; ``None`` keeps all.

    Raises:
        ConfigError: the file is missing or malformed, an episode carries no metrics, or no
            episode is kept.
    """
    if not path.is_file():
        raise ConfigError(f"{path}: no such episodes file")
    kept = []
    policies = set()
    for episode in read_episodes(path, strict=True):
        name = episode.metadata.get("policy")
        policies.add(str(name))
        if policy is not None and name != policy:
            continue
        if "metrics" not in episode.metadata:
            raise ConfigError(
                f"{path}: episode {episode.id} carries no metrics "
                "(not the episodes of an evaluation)"
            )
        kept.append((episode, EpisodeMetrics.model_validate(episode.metadata["metrics"])))
    if not kept:
        wanted = "" if policy is None else f" of policy {policy!r}"
        found = ", ".join(sorted(policies)) or "none"
        raise ConfigError(f"{path}: no episode{wanted} (policies there: {found})")
    return kept


SUMMARY_COLUMNS = (
    "model", "mode", "split", "tasks", "success [95% CI]", "facts stated", "answered",
    "turns", "calls", "loaded tools", "calls/execute turn", "tool time s (sim)",
    "format-error turns",
)  # fmt: skip
"""Headers of :func:`summary_cells`."""


def summary_cells(row: Mapping[str, Any]) -> list[str]:
    """One evaluation summary (``EvalSummary`` fields plus ``split``) as table cells.

    Success, turns, calls and loaded tools carry their 95% interval when the summary has one.
    """
    intervals = row.get("intervals") or {}

    def cell(value: float | None, key: str) -> str:
        bounds = intervals.get(key)
        if value is None:
            return "-"
        if not bounds:
            return f"{value:.2f}"
        return f"{value:.2f} [{bounds['low']:.2f}, {bounds['high']:.2f}]"

    return [
        str(row["model"]), str(row["mode"]), str(row.get("split", "-")),
        _task_count(row), cell(row["success_rate"], "success"),
        optional_cell(row.get("facts_stated"), 2), str(row["answered"]),
        cell(row["mean_turns"], "turns"), cell(row["mean_calls"], "tool_calls"),
        cell(row.get("mean_loaded_tools"), "loaded_tools"),
        f"{row['calls_per_execute_turn']:.2f}", f"{row['mean_sim_tools_s']:.2f}",
        str(row["format_error_turns"]),
    ]  # fmt: skip


def optional_cell(value: float | None, digits: int = 3) -> str:
    """A table cell for a number that older results may lack (``-`` then)."""
    return "-" if value is None else f"{value:.{digits}f}"


def _task_count(row: Mapping[str, Any]) -> str:
    episodes = row.get("episodes", row["tasks"])
    return (
        str(row["tasks"]) if episodes == row["tasks"] else f"{row['tasks']} ({episodes} episodes)"
    )


def summaries_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """A markdown table of evaluation summaries, one row per :func:`summary_cells`."""
    lines = [
        "Brackets: 95% intervals over tasks (Wilson for success, bootstrap for means).",
        "",
        "| " + " | ".join(SUMMARY_COLUMNS) + " |",
        "|" + "---|" * len(SUMMARY_COLUMNS),
        *("| " + " | ".join(summary_cells(row)) + " |" for row in results),
    ]
    return "\n".join(lines) + "\n"

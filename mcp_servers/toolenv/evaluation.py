"""Evaluate an agent on ToolEnv tasks.

Measures success, turns, parallelism, critical path, wall-clock, recall.

Each task runs in a fresh :meth:`ToolEnv.for_task` environment through the runtime's own
:class:`~paraagent_runtime.agent.Agent`; the answer is checked with :func:`check_answer`.

Metrics per episode (:class:`EpisodeMetrics`):

- ``execute_turns`` is the critical path in tool turns (turns with at least one non-meta call),
  compared with the gold DAG ``depth`` (the fewest execute turns that can solve the task);
- ``sim_wall_s`` is a simulated wall-clock: per turn, the model's time plus the *slowest* call
  (calls of a turn run in parallel). Tool latencies come from a seeded :class:`LatencyModel`
  evaluated without sleeping, so runs are fast and reproducible; the model's time is measured,
  or a fixed ``llm_turn_s`` per turn (useful for scripted policies, whose real time is ~0);
- ``recall`` is the share of gold tools the episode surfaced with ``search_tools`` /
  ``inspect_tool`` (1.0 when the toolspace preloads every tool); ``loaded_tools`` counts the
  tools it loaded that way (every tool when the toolspace preloads them).

Every summary carries 95% intervals (:func:`metric_intervals`: Wilson for success, bootstrap
for means) and the report keeps every episode's metrics, so two evaluations on the same tasks
compare paired by task (:func:`compare_rows`, :func:`compare_files`).
"""

from __future__ import annotations

import inspect
import json
import logging
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, mean
from typing import Any

from pydantic import BaseModel, ValidationError

from paraagent_runtime import (
    DEFAULT_MAX_REPEATED_TURNS,
    DEFAULT_MAX_TURNS,
    INSPECT_TOOL,
    META_TOOLS,
    MODES,
    SEARCH_TOOLS,
    SPLITS,
    Agent,
    AgentConfig,
    AgentMode,
    ConfigError,
    DispatchConfig,
    Episode,
    EpisodeMetrics,
    Policy,
    SamplingParams,
    Task,
    Toolspace,
    TrajectoryWriter,
    check_answer,
    model_facing_name,
)
from paraagent_runtime.concurrency import map_in_order
from paraagent_runtime.intervals import (
    DEFAULT_EVAL_TASKS,
    Interval,
    bootstrap_mean,
    paired_bootstrap_difference,
    wilson,
)
from paraagent_runtime.plotting import pyplot, save_figure

from .catalog_tasks import catalog_task_env, generate_catalog_tasks
from .generic import canonical_arguments
from .records import ToolRecord
from .simulator import LatencyModel
from .source import ToolEnv
from .tasks import check_families, generate_tasks

__all__ = [
    "CATALOGS",
    "MEAN_METRICS",
    "EnvFactory",
    "EvalConfig",
    "EvalReport",
    "ModeSummary",
    "PairedComparison",
    "PolicyFactory",
    "catalog_eval_setup",
    "compare_files",
    "compare_modes",
    "compare_rows",
    "comparison_table",
    "episode_metrics",
    "evaluate_toolenv",
    "load_outcomes",
    "markdown_table",
    "metric_intervals",
    "parse_modes",
    "write_report",
]

logger = logging.getLogger(__name__)

META_CALL_S = 0.05
"""Simulated latency of one meta-tool call (a local index lookup)."""

PolicyFactory = Callable[[Task, AgentMode], Policy]
"""Builds the policy for one task and mode (the oracle needs the task; models ignore it)."""

EnvFactory = Callable[[Task], ToolEnv]
"""Builds the fresh environment one task runs in."""

MEAN_METRICS: dict[str, str] = {
    "turns": "turns",
    "tool_calls": "tool calls",
    "loaded_tools": "loaded tools",
    "sim_wall_s": "sim wall s",
}
"""Per-episode metrics reported as means with bootstrap intervals, with their table titles."""

CATALOGS: tuple[str, ...] = ("builtin", "full")
"""``builtin``: hand-written task families; ``full``: description-driven real-catalog tasks."""


def listed(values: Sequence[str]) -> list[str]:
    """A repeatable, comma-separable option's values as one list (stripped, empty ones dropped)."""
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def parse_modes(modes: Sequence[str]) -> list[AgentMode]:
    """Expand ``--mode`` values (repeatable, comma-separated, or ``all``) into agent modes.

    Raises:
        ConfigError: an unknown mode, or none at all.
    """
    chosen: list[AgentMode] = []
    for name in (item.lower() for item in listed(modes)):
        if name == "all":
            chosen.extend(MODES)
        elif name in MODES:
            chosen.append(name)  # type: ignore[arg-type]
        else:
            raise ConfigError(f"--mode: unknown mode {name!r} (use {', '.join(MODES)} or all)")
    if not chosen:
        raise ConfigError(f"--mode: give at least one of {', '.join(MODES)} or all")
    return list(dict.fromkeys(chosen))


@dataclass
class EvalConfig:
    """What to evaluate and how.

    Attributes:
        policy: the policy label in reports (``oracle`` or a policy spec).
        modes: agent modes to run, each on the same tasks.
        split: task split (see :data:`~paraagent_runtime.tasks.SPLITS`).
        n: number of tasks.
        seed: task generator seed.
        max_turns: turns before an episode gives up.
        max_repeated_turns: identical turns in a row (calls and results) that end an episode
            with status ``repeating``; 0 never stops.
        sampling: decoding settings for model policies.
        latency: the simulated tool latency model.
        llm_turn_s: fixed model time per turn in the simulated wall-clock; None uses the
            measured model time.
        out: directory for the report files and trajectories (None: write nothing).
        catalog: ``builtin`` (hand-written task families) or ``full`` (description-driven
            tasks over the real catalog, see :func:`catalog_eval_setup`).
        distractors: non-gold tools added to each ``full``-catalog task's toolspace.
        concurrency: episodes run at once per mode (a local model batches their turns);
            results, progress and trajectories stay in task order.
        dispatch: the dispatch limits of every episode (calls per turn, concurrency, timeout).
        families: draw the tasks from these families only (``builtin`` catalog; None: the
            split's own; comma-separated values are split), e.g. to pool ≥ 60 tasks of the
            hidden-need families.
        prefetch_tools: load the N tools that best match each task's text before its first
            turn (:attr:`~paraagent_runtime.agent.AgentConfig.prefetch_tools`; 0: none).
    """

    policy: str = "oracle"
    modes: list[AgentMode] = field(default_factory=lambda: list(MODES))
    split: str = "test-seen"
    n: int = DEFAULT_EVAL_TASKS
    seed: int = 0
    max_turns: int = DEFAULT_MAX_TURNS
    max_repeated_turns: int = DEFAULT_MAX_REPEATED_TURNS
    sampling: SamplingParams = field(default_factory=SamplingParams)
    latency: LatencyModel = field(default_factory=lambda: LatencyModel(base_s=0.3, jitter_s=0.4))
    llm_turn_s: float | None = None
    out: Path | None = None
    catalog: str = "builtin"
    distractors: int = 48
    concurrency: int = 1
    dispatch: DispatchConfig = field(default_factory=DispatchConfig)
    families: list[str] | None = None
    prefetch_tools: int = 0

    def __post_init__(self) -> None:
        if self.catalog not in CATALOGS:
            raise ConfigError(
                f"--catalog: unknown catalog {self.catalog!r} (use one of {', '.join(CATALOGS)})"
            )
        if self.distractors < 0:
            raise ConfigError(f"--distractors: must be >= 0, got {self.distractors}")
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency: must be >= 1, got {self.concurrency}")
        if self.prefetch_tools < 0:
            raise ConfigError(f"--prefetch-tools: must be >= 0, got {self.prefetch_tools}")
        if self.split not in SPLITS:
            raise ConfigError(
                f"--split: unknown split {self.split!r} (use one of {', '.join(SPLITS)})"
            )
        if self.n < 1:
            raise ConfigError(f"--n-tasks: need at least one task, got {self.n}")
        if self.max_turns < 1:
            raise ConfigError(f"--max-turns: must be at least 1, got {self.max_turns}")
        if self.llm_turn_s is not None and self.llm_turn_s < 0:
            raise ConfigError(f"--llm-turn-s: must be >= 0, got {self.llm_turn_s}")
        self.modes = parse_modes(self.modes)
        if self.families is not None:
            if self.catalog != "builtin":
                raise ConfigError("--family: only the builtin catalog has task families")
            names = self.families if isinstance(self.families, str) else listed(self.families)
            self.families = check_families(names, self.split, owner="--family")

    def tasks(self) -> list[Task]:
        """The built-in tasks this config names: ``n`` of its split (and families), seeded."""
        return generate_tasks(self.n, seed=self.seed, split=self.split, families=self.families)


class ModeSummary(BaseModel):
    """Means over the episodes of one mode, with 95% intervals (see :func:`metric_intervals`)."""

    mode: str
    episodes: int
    success_rate: float
    mean_turns: float
    mean_tool_calls: float
    calls_per_execute_turn: float
    mean_execute_turns: float
    mean_gold_depth: float
    mean_sim_wall_s: float
    mean_llm_s: float
    recall: float
    mean_loaded_tools: float = 0.0
    intervals: dict[str, Interval] = {}


class PairedComparison(BaseModel):
    """``first`` minus ``second`` on the tasks both ran, with paired bootstrap 95% intervals.

    Attributes:
        first: What the differences are of (a mode, a policy).
        second: What they are taken against.
        tasks: Tasks both ran (each task's episodes averaged first).
        unpaired: Tasks only one of them ran (left out).
        differences: ``success`` (a rate difference) and every :data:`MEAN_METRICS` key.
    """

    first: str
    second: str
    tasks: int
    unpaired: int
    differences: dict[str, Interval]


class EvalReport(BaseModel):
    """A whole evaluation: settings, summaries per mode, every episode, paired mode differences.

    ``comparisons`` holds each mode minus the first mode, paired by task (:func:`compare_modes`);
    ``prefetch_tools`` is :attr:`EvalConfig.prefetch_tools` of the run.
    """

    policy: str
    split: str
    n: int
    seed: int
    catalog: str = "builtin"
    families: list[str] | None = None
    prefetch_tools: int = 0
    summaries: list[ModeSummary]
    episodes: list[EpisodeMetrics]
    comparisons: list[PairedComparison] = []

    @property
    def scope(self) -> str:
        """What was evaluated, as one word: the split, with its families when they were chosen."""
        return self.split if self.families is None else f"{self.split}:{'+'.join(self.families)}"


def _simulated_call_s(
    latency: LatencyModel, env: ToolEnv, toolspace: Toolspace, name: str, arguments: dict[str, Any]
) -> float:
    if name in META_TOOLS:
        return META_CALL_S
    spec = toolspace.get(name)
    record = env.simulator.records.get(spec.id) if spec is not None else None
    if record is None:
        return 0.0
    rng = random.Random(f"latency:{env.seed}:{record.id}:{canonical_arguments(arguments)}")
    return latency.delay_s(record, rng)


def _surfaced(episode: Episode) -> set[str]:
    names: set[str] = set(episode.prefetched_tools)
    for turn in episode.turns:
        for call, result in zip(turn.calls, turn.results, strict=False):
            if not result.ok:
                continue
            if call.name == SEARCH_TOOLS and isinstance(result.content, list):
                names.update(
                    card.get("name", "") for card in result.content if isinstance(card, dict)
                )
            elif call.name == INSPECT_TOOL and isinstance(result.content, dict):
                names.add(str(result.content.get("name", "")))
    return names


def episode_metrics(
    task: Task,
    episode: Episode,
    *,
    env: ToolEnv,
    toolspace: Toolspace,
    latency: LatencyModel,
    llm_turn_s: float | None = None,
    preloaded: bool = False,
) -> EpisodeMetrics:
    """Score one finished episode of ``task`` (see the module docstring for each metric)."""
    check = check_answer(task, episode.answer or "")
    explore = execute = execute_calls = 0
    llm_s = tools_s = 0.0
    for turn in episode.turns:
        llm_s += turn.model_latency_s if llm_turn_s is None else llm_turn_s
        real = [call for call in turn.calls if call.name not in META_TOOLS]
        if real:
            execute += 1
            execute_calls += len(real)
        elif turn.calls:
            explore += 1
        tools_s += max(
            (
                _simulated_call_s(latency, env, toolspace, call.name, call.arguments)
                for call in turn.calls
            ),
            default=0.0,
        )
    gold = {model_facing_name(tool) for tool in task.tools}
    surfaced = _surfaced(episode) - {""}
    recall = 1.0 if preloaded or not gold else len(gold & surfaced) / len(gold)
    return EpisodeMetrics(
        task_id=task.id,
        family=task.family,
        group=task.group,
        mode=episode.mode,
        status=episode.status,
        success=check.success and episode.status == "answered",
        score=check.score,
        turns=len(episode.turns),
        explore_turns=explore,
        execute_turns=execute,
        tool_calls=episode.n_calls,
        execute_calls=execute_calls,
        gold_calls=len(task.calls),
        gold_depth=task.depth,
        llm_s=round(llm_s, 4),
        sim_tools_s=round(tools_s, 4),
        sim_wall_s=round(llm_s + tools_s, 4),
        recall=recall,
        format_error_turns=sum(1 for turn in episode.turns if turn.format_errors),
        loaded_tools=len(toolspace.tools) if preloaded else len(surfaced),
    )


def _per_task(rows: Sequence[EpisodeMetrics], key: str) -> dict[str, float]:
    """``key`` per task, a task's episodes averaged (several samples of one task are one item)."""
    groups: dict[str, list[float]] = {}
    for row in rows:
        groups.setdefault(row.task_id, []).append(float(getattr(row, key)))
    return {task: fmean(values) for task, values in groups.items()}


def metric_intervals(rows: Sequence[EpisodeMetrics]) -> dict[str, Interval]:
    """Success with its Wilson 95% interval and each :data:`MEAN_METRICS` mean with a bootstrap one.

    Intervals are over tasks: when a task ran several times its episodes are averaged first (and
    success then gets a bootstrap interval of the per-task rates, since episodes of one task are
    not independent draws).
    """
    success = _per_task(rows, "success")
    return {
        "success": wilson(sum(row.success for row in rows), len(rows))
        if len(success) == len(rows)
        else bootstrap_mean(list(success.values())),
        **{key: bootstrap_mean(list(_per_task(rows, key).values())) for key in MEAN_METRICS},
    }


def compare_rows(
    first: str,
    first_rows: Sequence[EpisodeMetrics],
    second: str,
    second_rows: Sequence[EpisodeMetrics],
) -> PairedComparison:
    """``first_rows`` minus ``second_rows``, paired by task id (see :class:`PairedComparison`).

    Raises:
        ConfigError: the two share no task.
    """
    keys = ("success", *MEAN_METRICS)
    a = {key: _per_task(first_rows, key) for key in keys}
    b = {key: _per_task(second_rows, key) for key in keys}
    shared = sorted(a["success"].keys() & b["success"].keys())
    if not shared:
        raise ConfigError(f"cannot pair {first!r} with {second!r}: they share no task")
    return PairedComparison(
        first=first,
        second=second,
        tasks=len(shared),
        unpaired=len(a["success"].keys() ^ b["success"].keys()),
        differences={
            key: paired_bootstrap_difference(
                [a[key][task] for task in shared], [b[key][task] for task in shared]
            )
            for key in keys
        },
    )


def compare_modes(report: EvalReport) -> list[PairedComparison]:
    """Every mode of ``report`` after the first minus the first, paired by task."""
    by_mode = _rows_by_mode(report)
    modes = [summary.mode for summary in report.summaries]
    return [
        compare_rows(mode, by_mode[mode], modes[0], by_mode[modes[0]])
        for mode in modes[1:]
        if by_mode[mode] and by_mode[modes[0]]
    ]


def _rows_by_mode(report: EvalReport) -> dict[str, list[EpisodeMetrics]]:
    by_mode: dict[str, list[EpisodeMetrics]] = {summary.mode: [] for summary in report.summaries}
    for row in report.episodes:
        by_mode.setdefault(row.mode, []).append(row)
    return by_mode


def load_outcomes(path: Path) -> dict[str, list[EpisodeMetrics]]:
    """The per-episode metrics an evaluation file keeps, grouped by what was evaluated.

    Reads a ``report.json`` of ``paraagent eval toolenv`` (one group per mode, labelled by the
    mode), its ``--summary`` JSON (labelled ``split mode``) or the ``--out`` JSON of
    ``paraagent train eval`` (a list of summaries, each with its ``outcomes``; labelled
    ``model mode split``).

    Raises:
        ConfigError: the file is missing, not JSON, or keeps no per-episode outcomes.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such evaluation file") from exc
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not an evaluation JSON ({exc})") from exc
    try:
        if isinstance(data, Mapping) and isinstance(data.get("splits"), list):
            groups = {
                f"{report.scope} {mode}": rows
                for report in (EvalReport.model_validate(entry) for entry in data["splits"])
                for mode, rows in _rows_by_mode(report).items()
            }
        elif isinstance(data, Mapping):
            groups = _rows_by_mode(EvalReport.model_validate(data))
        elif isinstance(data, list):
            groups = {
                " ".join(str(entry.get(key, "-")) for key in ("model", "mode", "split")): [
                    EpisodeMetrics.model_validate(row) for row in entry.get("outcomes", [])
                ]
                for entry in data
                if isinstance(entry, Mapping)
            }
        else:
            groups = {}
    except ValidationError as exc:
        raise ConfigError(f"{path}: not an evaluation JSON ({str(exc).splitlines()[0]})") from exc
    kept = {label: rows for label, rows in groups.items() if rows}
    if not kept:
        raise ConfigError(
            f"{path}: keeps no per-task outcomes (an eval toolenv report.json or a train eval "
            "--out JSON written since outcomes are kept)"
        )
    return kept


def compare_files(first: Path, second: Path) -> list[PairedComparison]:
    """Each evaluation group of ``first`` minus the same group of ``second``, paired by task.

    Groups pair by label (the mode, or ``model mode split``); two files of one group each pair
    whatever their labels (two policies on the same tasks).

    Raises:
        ConfigError: a file cannot be read (see :func:`load_outcomes`), nothing pairs, or a
            pair shares no task.
    """
    a, b = load_outcomes(first), load_outcomes(second)
    shared = [label for label in a if label in b]
    if shared:
        pairs = [(label, label) for label in shared]
    elif len(a) == len(b) == 1:
        pairs = [(next(iter(a)), next(iter(b)))]
    else:
        raise ConfigError(
            f"--compare: nothing pairs: {first} has {', '.join(a)}; {second} has {', '.join(b)}"
        )
    return [
        compare_rows(
            f"{_file_label(first)} {x}",
            a[x],
            f"{_file_label(second)} {y}",
            b[y],
        )
        for x, y in pairs
    ]


def _file_label(path: Path) -> str:
    """A short name of an evaluation file: its run directory for a ``report.json``."""
    return path.parent.name if path.name == "report.json" and path.parent.name else path.stem


def comparison_table(comparisons: Sequence[PairedComparison]) -> str:
    """Paired differences as a markdown table (success in points, means in their units)."""
    titles = ["success (pts)", *MEAN_METRICS.values()]
    lines = [
        "| difference | tasks | " + " | ".join(f"Δ {title}" for title in titles) + " |",
        "|---|---:|" + "---:|" * len(titles),
    ]
    for comparison in comparisons:
        cells = [_signed(comparison.differences["success"], 100.0, 1)]
        cells += [_signed(comparison.differences[key], 1.0, 2) for key in MEAN_METRICS]
        lines.append(
            f"| {comparison.first} − {comparison.second} | {comparison.tasks} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines) + "\n"


def _signed(interval: Interval, scale: float, digits: int) -> str:
    return (
        f"{scale * interval.estimate:+.{digits}f} "
        f"[{scale * interval.low:+.{digits}f}, {scale * interval.high:+.{digits}f}]"
    )


def _with_interval(interval: Interval, scale: float = 1.0, digits: int = 2) -> str:
    return (
        f"{scale * interval.estimate:.{digits}f} "
        f"[{scale * interval.low:.{digits}f}, {scale * interval.high:.{digits}f}]"
    )


def _summarize(mode: str, rows: Sequence[EpisodeMetrics]) -> ModeSummary:
    execute_turns = sum(row.execute_turns for row in rows)
    return ModeSummary(
        mode=mode,
        episodes=len(rows),
        success_rate=mean(row.success for row in rows),
        mean_turns=mean(row.turns for row in rows),
        mean_tool_calls=mean(row.tool_calls for row in rows),
        calls_per_execute_turn=sum(row.execute_calls for row in rows) / execute_turns
        if execute_turns
        else 0.0,
        mean_execute_turns=mean(row.execute_turns for row in rows),
        mean_gold_depth=mean(row.gold_depth for row in rows),
        mean_sim_wall_s=mean(row.sim_wall_s for row in rows),
        mean_llm_s=mean(row.llm_s for row in rows),
        recall=mean(row.recall for row in rows),
        mean_loaded_tools=mean(row.loaded_tools for row in rows),
        intervals=metric_intervals(rows),
    )


async def evaluate_toolenv(
    config: EvalConfig,
    policy_factory: PolicyFactory,
    *,
    tasks: Sequence[Task] | None = None,
    base_env: ToolEnv | None = None,
    on_episode: Callable[[EpisodeMetrics], Awaitable[None] | None] | None = None,
    env_factory: EnvFactory | None = None,
    trajectory: TrajectoryWriter | None = None,
) -> EvalReport:
    """Run every mode of ``config`` on the same tasks and return the report.

    Args:
        config: the evaluation settings.
        policy_factory: the policy for a task and mode; policies it returns are not closed
            here (the caller owns them, so one model can serve every episode).
        tasks: the tasks to run (default: :meth:`EvalConfig.tasks`).
        base_env: the environment tasks are derived from (default: the built-in catalog).
        on_episode: called with each episode's metrics as it finishes (progress display).
        env_factory: the environment of each task (default: ``base_env.for_task(task)``);
            catalog tasks use :func:`~mcp_servers.toolenv.catalog_tasks.catalog_task_env`.
        trajectory: also write every episode (all modes, task order) to this open writer.
    """
    chosen = list(tasks) if tasks is not None else config.tasks()
    base = base_env or ToolEnv.builtin()
    make_env = env_factory or base.for_task
    rows: list[EpisodeMetrics] = []
    for mode in config.modes:
        agent_config = AgentConfig(
            mode=mode,
            max_turns=config.max_turns,
            max_repeated_turns=config.max_repeated_turns,
            sampling=config.sampling,
            dispatch=config.dispatch,
            prefetch_tools=config.prefetch_tools,
        )
        writer = TrajectoryWriter(config.out / f"trajectories-{mode}.jsonl") if config.out else None

        async def run_task(
            task: Task, mode: AgentMode = mode, agent_config: AgentConfig = agent_config
        ) -> tuple[Episode, EpisodeMetrics]:
            env = make_env(task)
            toolspace = Toolspace(env.sources)
            try:
                await toolspace.refresh()
                preloaded = len(toolspace.tools) <= toolspace.preload_threshold
                agent = Agent(policy_factory(task, mode), toolspace, agent_config)
                episode = await agent.run(
                    task.query,
                    task_id=task.id,
                    metadata={"policy": config.policy, "split": task.split, "family": task.family},
                )
                metrics = episode_metrics(
                    task,
                    episode,
                    env=env,
                    toolspace=toolspace,
                    latency=config.latency,
                    llm_turn_s=config.llm_turn_s,
                    preloaded=preloaded,
                )
            finally:
                await toolspace.aclose()
            episode.metadata.update(success=metrics.success, metrics=metrics.model_dump())
            return episode, metrics

        try:
            async for episode, metrics in map_in_order(
                run_task, chosen, concurrency=config.concurrency
            ):
                for sink in (writer, trajectory):
                    if sink is not None:
                        sink.write(episode)
                rows.append(metrics)
                if on_episode is not None:
                    outcome = on_episode(metrics)
                    if inspect.isawaitable(outcome):
                        await outcome
        finally:
            if writer is not None:
                writer.close()
    summaries = [
        _summarize(mode, [row for row in rows if row.mode == mode]) for mode in config.modes
    ]
    report = EvalReport(
        policy=config.policy,
        split=config.split,
        n=len(chosen),
        seed=config.seed,
        catalog=config.catalog,
        families=config.families,
        prefetch_tools=config.prefetch_tools,
        summaries=summaries,
        episodes=rows,
    )
    report.comparisons = compare_modes(report)
    return report


_PLAIN_COLUMNS = (
    ("calls/exec turn", "calls_per_execute_turn", "{:.2f}"),
    ("critical path (exec turns)", "mean_execute_turns", "{:.2f}"),
    ("gold depth", "mean_gold_depth", "{:.2f}"),
    ("LLM s", "mean_llm_s", "{:.2f}"),
    ("recall", "recall", "{:.0%}"),
)


def markdown_table(report: EvalReport) -> str:
    """The per-mode summary with 95% intervals as a markdown table, under a caption.

    Below it, each mode's paired difference to the first mode (:func:`comparison_table`).
    """
    titles = ["mode", "success % [95% CI]", *MEAN_METRICS.values()]
    titles += [title for title, _, _ in _PLAIN_COLUMNS]
    lines = [
        f"ToolEnv eval — policy `{report.policy}`, catalog `{report.catalog}`, "
        f"split `{report.scope}`, {report.n} tasks, seed {report.seed}"
        + (
            f", the {report.prefetch_tools} tools best matching each task loaded before its "
            "first turn"
            if report.prefetch_tools
            else ""
        )
        + ". Brackets: 95% intervals "
        "(Wilson for success, bootstrap over tasks for means).",
        "",
        "| " + " | ".join(titles) + " |",
        "|" + "|".join("---" if index == 0 else "---:" for index in range(len(titles))) + "|",
    ]
    for summary in report.summaries:
        intervals = summary.intervals or metric_intervals(
            [row for row in report.episodes if row.mode == summary.mode]
        )
        cells = [summary.mode, _with_interval(intervals["success"], 100.0, 1)]
        cells += [_with_interval(intervals[key]) for key in MEAN_METRICS]
        cells += [fmt.format(getattr(summary, key)) for _, key, fmt in _PLAIN_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    if report.comparisons:
        lines += [
            "",
            "Paired by task (each mode minus the first; bootstrap 95% intervals):",
            "",
            comparison_table(report.comparisons).rstrip("\n"),
        ]
    return "\n".join(lines) + "\n"


def catalog_eval_setup(
    config: EvalConfig, records: Sequence[ToolRecord]
) -> tuple[list[Task], EnvFactory]:
    """Tasks and per-task environments of a ``full``-catalog evaluation.

    Tasks are :func:`~mcp_servers.toolenv.catalog_tasks.generate_catalog_tasks` over ``records``
    (G1/G2/G3 cycling, held-out splits by provider/category hash); each runs over its gold tools
    plus ``config.distractors`` seeded distractors.

    Raises:
        ConfigError: the split has no usable tools.
    """
    tasks = generate_catalog_tasks(records, config.n, seed=config.seed, split=config.split)

    def factory(task: Task) -> ToolEnv:
        return catalog_task_env(task, records, distractors=config.distractors)

    return tasks, factory


def _plot(report: EvalReport, path: Path) -> None:
    plt = pyplot()
    modes = [summary.mode for summary in report.summaries]
    positions = range(len(modes))
    figure, (turns_axis, wall_axis, rate_axis) = plt.subplots(1, 3, figsize=(13, 4))
    width = 0.27
    for offset, (label, key) in enumerate(
        (
            ("turns", "mean_turns"),
            ("critical path", "mean_execute_turns"),
            ("gold depth", "mean_gold_depth"),
        )
    ):
        turns_axis.bar(
            [p + (offset - 1) * width for p in positions],
            [getattr(s, key) for s in report.summaries],
            width,
            label=label,
        )
    turns_axis.set_title("turns per episode")
    turns_axis.legend()
    wall_axis.bar(positions, [s.mean_sim_wall_s for s in report.summaries], color="tab:purple")
    wall_axis.set_title("simulated wall-clock (s)")
    for offset, (label, key) in enumerate((("success", "success_rate"), ("recall", "recall"))):
        rate_axis.bar(
            [p + (offset - 0.5) * width for p in positions],
            [getattr(s, key) for s in report.summaries],
            width,
            label=label,
        )
    rate_axis.set_ylim(0, 1.05)
    rate_axis.set_title("success and retrieval recall")
    rate_axis.legend()
    for axis in (turns_axis, wall_axis, rate_axis):
        axis.set_xticks(list(positions), modes)
    figure.suptitle(f"ToolEnv — {report.policy}, {report.split}, {report.n} tasks")
    figure.tight_layout()
    save_figure(figure, path, dpi=110)


def write_report(report: EvalReport, out: Path) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``report.png`` into ``out``; return their paths.

    Raises:
        MissingExtraError: matplotlib is not installed (the JSON and markdown are written first).
    """
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "report.json", "markdown": out / "report.md", "plot": out / "report.png"}
    paths["json"].write_text(report.model_dump_json(indent=2), encoding="utf-8")
    paths["markdown"].write_text(markdown_table(report), encoding="utf-8")
    _plot(report, paths["plot"])
    return paths

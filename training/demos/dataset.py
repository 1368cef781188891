"""Build a demonstration dataset: demonstrate, filter, balance, write JSONL and the dataset card."""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime import ConfigError, Message, Task, read_jsonl_lines

from ..config import config_to_dict
from ..task_source import TaskSet, build_task_set, is_catalog_task
from .card import write_card
from .config import DemoConfig
from .demonstrator import Roles, demonstrate
from .filters import FilterLimits, assistant_turns, filter_trajectory

__all__ = ["Demo", "DemoBuild", "balance", "build_demos", "load_demos", "run_demos"]

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


class Demo(BaseModel):
    """One linearized single-agent ParaAct trajectory and what it demonstrates."""

    id: str
    task_id: str
    family: str
    group: str
    source: str = Field(default="builtin", description="builtin or catalog (the task's origin).")
    tools: list[str] = Field(default_factory=list, description="The gold DAG's tool ids.")
    categories: list[str] = Field(
        default_factory=list, description="Categories of the gold tools (coverage in the card)."
    )
    mode: str
    style: str = Field(
        description="eager (explore everything first) or lazy (explore before each level)."
    )
    recovery: str | None = Field(default=None, description="The recovered mistake, if any.")
    mistake_turns: list[int] = Field(
        default_factory=list,
        description="Assistant turns (0-based) with the injected mistake; SFT puts no loss there.",
    )
    messages: list[Message]
    answer: str | None = None
    success: bool = False
    gold_depth: int
    gold_calls: int
    tool_turns: int
    calls: int
    phase_switches: int
    roles: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list)


class DemoBuild(BaseModel):
    """The result of :func:`build_demos`: kept demos, rejections and where files went."""

    demos: list[Demo]
    rejected: list[Demo]
    candidates: int
    demos_path: Path
    card_path: Path


def _phase_switches(phases: list[str]) -> int:
    return sum(1 for before, after in zip(phases, phases[1:], strict=False) if before != after)


async def run_demos(
    tasks: Iterable[Task] | TaskSet, config: DemoConfig, progress: Progress | None = None
) -> list[Demo]:
    """Demonstrate every task and attach the filter verdict (``rejected`` empty = kept).

    Each task runs in its own environment (:meth:`~training.task_source.TaskSet.env_for`): plain
    tasks get one from ``config.task_source``.
    """
    task_set = (
        tasks
        if isinstance(tasks, TaskSet)
        else TaskSet(list(tasks), config.task_source, failure_rate=config.failure_rate)
    )
    limits = FilterLimits(
        turn_slack=config.turn_slack,
        max_irrelevant_calls=config.max_irrelevant_calls,
        mode=config.mode,
    )
    demos = []
    for index, task in enumerate(task_set.tasks):
        rng = random.Random(f"demo:{config.seed}:{config.mode}:{task.id}")
        env = task_set.env_for(task)
        specs = {spec.id: spec for spec in env.specs()}
        roles = Roles.scripted(
            specs,
            lazy_prob=config.lazy_explore_prob,
            recovery_prob=config.recovery_prob,
            need_words=config.need_words,
            first_search=config.first_search,
            answer_notes=config.answer_notes,
        )
        episode, state = await demonstrate(
            task,
            env,
            roles=roles,
            rng=rng,
            mode=config.mode,
            top_k=config.search_top_k,
            max_turns=config.max_turns,
        )
        turns = assistant_turns(episode.messages)
        verdict = filter_trajectory(task, episode.messages, episode.answer, limits)
        if episode.status != "answered":
            verdict.reasons.insert(0, f"episode_{episode.status}")
        if state is not None and state.flags:
            verdict.reasons.append("verifier_flags")
        plan = state.plan if state is not None else None
        recovered = (
            plan.recovery
            if plan is not None and state is not None and state.recovery_used
            else None
        )
        demos.append(
            Demo(
                id=f"{config.mode}-{task.id}",
                task_id=task.id,
                family=task.family,
                group=task.group,
                source="catalog" if is_catalog_task(task) else "builtin",
                tools=task.tools,
                categories=sorted({specs[tool].category for tool in task.tools if tool in specs}),
                mode=config.mode,
                style="lazy"
                if plan is not None and plan.lazy and config.mode == "paraact"
                else "eager",
                recovery=recovered,
                mistake_turns=state.mistake_turns if state is not None and recovered else [],
                messages=episode.messages,
                answer=episode.answer,
                success=verdict.kept,
                gold_depth=task.depth,
                gold_calls=len(task.calls),
                tool_turns=sum(1 for turn in turns if turn.calls),
                calls=sum(len(turn.calls) for turn in turns),
                phase_switches=_phase_switches(
                    [turn.phase for turn in turns if turn.calls and turn.phase]
                ),
                roles=state.roles if state is not None else [],
                flags=(state.flags if state is not None else [])
                + ([episode.error] if episode.error else []),
                rejected=verdict.reasons,
            )
        )
        if progress is not None:
            progress(index + 1, len(task_set.tasks))
    return demos


def balance(
    demos: list[Demo],
    *,
    n: int | None,
    max_recovered_share: float,
    seed: int,
    by_group: bool = True,
) -> list[Demo]:
    """Pick a balanced subset: equal groups, styles interleaved, recovered demos capped.

    Within each group the demos are dealt round-robin over (style, phase switches, recovery)
    buckets, so each kind is represented before any kind repeats. The result is in a seeded
    random order, so any prefix of it (SFT's ``max_demos``) is a fair sample of every source,
    family and group: sorted by id, catalog demos would all come before the built-in ones.
    """
    rng = random.Random(f"balance:{seed}")
    groups: dict[str, list[Demo]] = defaultdict(list)
    for demo in demos:
        groups[demo.group if by_group else "all"].append(demo)
    total = (
        n
        if n is not None
        else (min(len(g) for g in groups.values()) * len(groups) if by_group else len(demos))
    )
    quota = {
        name: total // len(groups) + (1 if i < total % len(groups) else 0)
        for i, name in enumerate(sorted(groups))
    }
    recovered_cap = int(max_recovered_share * total)
    chosen: list[Demo] = []
    leftovers: list[Demo] = []
    recovered = 0
    for name in sorted(groups):
        buckets: dict[tuple[Any, ...], list[Demo]] = defaultdict(list)
        for demo in sorted(groups[name], key=lambda d: d.id):
            buckets[(demo.style, min(demo.phase_switches, 3), demo.recovery is not None)].append(
                demo
            )
        for bucket in buckets.values():
            rng.shuffle(bucket)
        order = sorted(buckets)
        taken = 0
        while taken < quota[name] and any(buckets.values()):
            for key in order:
                if taken >= quota[name] or not buckets[key]:
                    continue
                demo = buckets[key].pop()
                if demo.recovery is not None and recovered >= recovered_cap:
                    continue
                recovered += demo.recovery is not None
                chosen.append(demo)
                taken += 1
        leftovers.extend(
            demo for bucket in buckets.values() for demo in bucket if demo.recovery is None
        )
    if len(chosen) < total:
        rng.shuffle(leftovers)
        chosen.extend(leftovers[: total - len(chosen)])
    ordered = sorted(chosen, key=lambda d: d.id)
    random.Random(f"order:{seed}").shuffle(ordered)
    return ordered


async def build_demos(
    config: DemoConfig,
    progress: Progress | None = None,
    *,
    records: Sequence[ToolRecord] | None = None,
) -> DemoBuild:
    """Generate tasks, demonstrate them, filter, balance, and write the dataset with its card.

    Writes ``demos.jsonl`` (kept demos), ``rejected.jsonl``, ``card.json``, ``card.md`` and
    ``config.json`` into ``config.output_dir``. ``records`` is the catalog of catalog tasks
    (default: loaded from ``config.task_source.catalog`` when the source needs it).
    """
    task_set = await asyncio.to_thread(
        build_task_set,
        config.task_source,
        config.n_tasks,
        seed=config.seed,
        split=config.split,
        families=config.families,
        failure_rate=config.failure_rate,
        records=records,
    )
    demos = await run_demos(task_set, config, progress)
    passed = [demo for demo in demos if demo.success]
    rejected = [demo for demo in demos if not demo.success]
    if not passed:
        raise ConfigError("no demonstration passed the filters; see rejected.jsonl")
    kept = balance(
        passed, n=config.n_demos, max_recovered_share=config.max_recovered_share, seed=config.seed,
        by_group=config.balance_groups,
    )  # fmt: skip
    out = config.output_dir
    out.mkdir(parents=True, exist_ok=True)
    demos_path = out / "demos.jsonl"
    _write_jsonl(demos_path, kept)
    _write_jsonl(out / "rejected.jsonl", rejected)
    (out / "config.json").write_text(
        json.dumps(config_to_dict(config), indent=2) + "\n", encoding="utf-8"
    )
    card_path = write_card(
        out, config, kept=kept, passed=passed, rejected=rejected, candidates=len(demos)
    )
    return DemoBuild(
        demos=kept,
        rejected=rejected,
        candidates=len(demos),
        demos_path=demos_path,
        card_path=card_path,
    )


def _write_jsonl(path: Path, demos: Iterable[Demo]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for demo in demos:
            handle.write(demo.model_dump_json() + "\n")


def load_demos(path: str | Path) -> list[Demo]:
    """Read demos back from JSONL (gzipped when the name ends in ``.gz``).

    Raises:
        ConfigError: the file is missing, is not readable as (gzipped) text, or a line is not a
            demo (the message names the line).
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigError(
            f"demo file {str(file)!r} does not exist (run `paraagent train demos` first)"
        )
    demos = []
    for number, line in read_jsonl_lines(file):
        try:
            demos.append(Demo.model_validate_json(line))
        except ValidationError as exc:
            raise ConfigError(
                f"{file}:{number}: not a demo record ({str(exc).splitlines()[0]})"
            ) from exc
    return demos

"""``paraagent run``: run the agent over ToolEnv (plus optional MCP servers) and report per task."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from ..agent import Agent, AgentConfig
from ..checker import check_answer
from ..errors import ConfigError, UserError
from ..events import AgentEvent, CallFinished, PhaseEvent, TurnStarted
from ..modes import AgentMode
from ..policy import policy_from_spec
from ..policy.base import Policy, SamplingParams
from ..report import summarize, summary_table, trace_table
from ..search import default_tool_search, index_scope
from ..sources import ToolSource
from ..tasks import Task
from ..toolspace import Toolspace
from ..trajectory import Episode, TrajectoryWriter

__all__ = ["RunOptions", "TaskItem", "load_task_items", "run_tasks"]


@dataclass
class RunOptions:
    """Everything ``paraagent run`` was asked to do."""

    task: str | None
    tasks_file: Path | None
    builtin_tasks: int
    policy: str
    base_url: str | None
    mode: AgentMode
    max_turns: int
    max_tokens: int
    temperature: float
    seed: int
    mcp_config: Path | None
    trajectory: Path


@dataclass
class TaskItem:
    """One thing to run: free text, or a ToolEnv task with a checker."""

    query: str
    task_id: str | None = None
    toolenv_task: Task | None = None


def load_task_items(options: RunOptions) -> list[TaskItem]:
    """Collect the tasks named by the options (argument, JSONL file, built-in ToolEnv tasks)."""
    from mcp_servers.toolenv import builtin_tasks

    items: list[TaskItem] = []
    if options.task:
        items.append(TaskItem(query=options.task))
    if options.tasks_file is not None:
        items.extend(_read_tasks_file(options.tasks_file))
    if options.builtin_tasks:
        items.extend(
            TaskItem(query=t.query, task_id=t.id, toolenv_task=t)
            for t in builtin_tasks()[: options.builtin_tasks]
        )
    if not items:
        raise UserError(
            'nothing to run: give a task ("paraagent run \\"...\\""), --tasks FILE or '
            "--builtin-tasks N"
        )
    return items


def _read_tasks_file(path: Path) -> list[TaskItem]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"--tasks {path}: {exc.strerror or exc}") from exc
    items = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: not JSON ({exc})") from exc
        if isinstance(record, dict) and "facts" in record and "calls" in record:
            task = Task.model_validate(record)
            items.append(TaskItem(query=task.query, task_id=task.id, toolenv_task=task))
        elif isinstance(record, dict) and isinstance(
            record.get("query") or record.get("task"), str
        ):
            items.append(
                TaskItem(query=record.get("query") or record["task"], task_id=record.get("id"))
            )
        else:
            raise ConfigError(f'{path}:{number}: expected a ToolEnv task or {{"query": "..."}}')
    return items


def _event_printer(console: Console) -> Any:
    def on_event(event: AgentEvent) -> None:
        if isinstance(event, TurnStarted):
            console.print(f"  [dim]turn {event.turn}: thinking…[/]")
        elif isinstance(event, PhaseEvent) and event.calls:
            names = ", ".join(call.name for call in event.calls)
            console.print(
                f"  [bold]{event.phase}[/] × {len(event.calls)}: {names}", highlight=False
            )
        elif isinstance(event, CallFinished) and not event.result.ok:
            console.print(
                f"    [red]✗ {event.result.name}: {event.result.error_kind.value}[/]",
                highlight=False,
            )

    return on_event


def _mcp_sources(path: Path | None) -> list[ToolSource]:
    if path is None:
        return []
    from ..mcp import load_mcp_sources

    return list(load_mcp_sources(path))


async def run_tasks(options: RunOptions, console: Console) -> list[Episode]:
    """Run every task, print its phase trace and answer, then a summary; return the episodes."""
    from mcp_servers.toolenv import ToolEnv

    items = load_task_items(options)
    policy: Policy = policy_from_spec(options.policy, base_url=options.base_url)
    config = AgentConfig(
        mode=options.mode,
        max_turns=options.max_turns,
        sampling=SamplingParams(
            max_tokens=options.max_tokens, temperature=options.temperature, seed=options.seed
        ),
    )
    extra_sources = _mcp_sources(options.mcp_config)
    base_env = ToolEnv.builtin(seed=options.seed)
    search = default_tool_search(index_scope(options.mcp_config))
    episodes: list[Episode] = []
    console.print(
        f"policy [bold]{options.policy}[/], mode [bold]{options.mode}[/], trajectories → "
        f"{options.trajectory}"
    )
    try:
        with TrajectoryWriter(options.trajectory) as writer:
            for number, item in enumerate(items, start=1):
                env = (
                    base_env.for_task(item.toolenv_task)
                    if item.toolenv_task is not None
                    else base_env
                )
                toolspace = Toolspace([*env.sources, *extra_sources], search=search)
                await toolspace.refresh()
                console.rule(f"[{number}/{len(items)}] {item.task_id or 'task'}")
                console.print(item.query, highlight=False)
                episode = await Agent(policy, toolspace, config).run(
                    item.query, task_id=item.task_id, on_event=_event_printer(console)
                )
                if item.toolenv_task is not None:
                    check = check_answer(item.toolenv_task, episode.answer or "")
                    episode.metadata.update(success=check.success, check=check.model_dump())
                writer.write(episode)
                episodes.append(episode)
                console.print(trace_table(episode))
                verdict = ""
                if "success" in episode.metadata:
                    verdict = (
                        "  [green]✓ success[/]"
                        if episode.metadata["success"]
                        else "  [red]✗ failed[/]"
                    )
                console.print(
                    f"[bold]answer[/] ({episode.status}): {episode.answer or '—'}{verdict}",
                    highlight=False,
                )
    finally:
        await policy.aclose()
        for source in extra_sources:
            await source.aclose()
    console.rule("summary")
    console.print(summary_table(summarize(episodes)))
    return episodes

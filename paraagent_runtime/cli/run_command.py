"""``paraagent run``: run the agent over the chosen tools and report per task.

The tools follow :mod:`.tool_sources` (the user's MCP servers, or the built-in ToolEnv). Every
episode is written to the trajectory file as it ends; Ctrl-C writes the running one with status
``interrupted`` and says so in one line.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from ..agent import Agent, AgentConfig
from ..checker import check_answer
from ..dispatch import DispatchConfig
from ..errors import ConfigError, UserError
from ..modes import AgentMode
from ..policy import policy_from_spec
from ..policy.base import Policy, SamplingParams
from ..report import summarize, summary_table, trace_table
from ..search import default_tool_search, index_scope
from ..sources import ToolSource
from ..tasks import Task
from ..toolspace import Toolspace
from ..trajectory import Episode, TrajectoryWriter
from .live_trace import LiveTrace
from .output import default_model_notice, index_notice
from .run_paths import fresh_run_path
from .tool_sources import ToolChoice, announce, check_names, choose_tools

__all__ = [
    "RunOptions",
    "TaskItem",
    "check_writable",
    "errored",
    "first_error",
    "load_task_items",
    "run_tasks",
]


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
    max_repeated_turns: int
    max_tokens: int
    temperature: float
    seed: int
    mcp_config: Path | None
    toolenv: bool | None
    trajectory: Path | None
    """The trajectories file; ``None`` claims ``runs/trajectories-<stamp>.jsonl`` once the tasks
    and the policy have loaded (and sets it here), so a usage error leaves no empty file."""
    dispatch: DispatchConfig = field(default_factory=DispatchConfig)
    prefetch_tools: int = 0


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


def _mcp_sources(path: Path | None) -> list[ToolSource]:
    if path is None:
        return []
    from ..mcp import load_mcp_sources

    return list(load_mcp_sources(path))


def _choose(options: RunOptions, items: list[TaskItem]) -> ToolChoice:
    """The tool-source rule, plus: ToolEnv tasks are checked in ToolEnv's world, so it joins."""
    toolenv = options.toolenv
    if any(item.toolenv_task is not None for item in items):
        if toolenv is False:
            raise UserError("ToolEnv tasks run on the built-in ToolEnv: drop --no-toolenv")
        toolenv = True
    return choose_tools(options.mcp_config, toolenv)


class _Recorder:
    """The episode sink of one task: checks a ToolEnv answer, then writes the episode.

    The agent writes even a cancelled episode before the cancellation goes on; in ``run`` only
    Ctrl-C cancels, so that episode is recorded as ``interrupted``.
    """

    def __init__(self, writer: TrajectoryWriter, item: TaskItem) -> None:
        self.writer = writer
        self.item = item

    def write(self, episode: Episode) -> None:
        """Check (ToolEnv tasks), relabel a cancelled episode, and append it to the file."""
        if episode.status == "cancelled":
            episode.status = "interrupted"
        elif self.item.toolenv_task is not None:
            check = check_answer(self.item.toolenv_task, episode.answer or "")
            episode.metadata.update(success=check.success, check=check.model_dump())
        self.writer.write(episode)


def errored(episodes: list[Episode]) -> int:
    """How many episodes ended in an error (``paraagent run`` then exits 1)."""
    return sum(episode.status == "error" for episode in episodes)


def first_error(episodes: list[Episode]) -> str | None:
    """The cause of the first episode that ended in an error, if any."""
    return next((e.error or "unknown error" for e in episodes if e.status == "error"), None)


def check_writable(path: Path) -> None:
    """Fail before any work when the trajectory file cannot be written.

    Raises:
        ConfigError: Its folder cannot be created, or the file cannot be opened for appending.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or exc
        raise ConfigError(f"--out {path}: cannot create {path.parent} ({reason})") from exc
    if path.is_dir() or not os.access(path if path.exists() else path.parent, os.W_OK):
        raise ConfigError(f"--out {path}: not a writable file")


def _outcome(episode: Episode) -> str:
    """The episode's last line: its answer (or that there is none) and verdict, or its cause."""
    if episode.status == "error":
        return f"[bold red]failed:[/] [red]{escape(episode.error or 'unknown error')}[/]"
    verdict = ""
    if "success" in episode.metadata:
        verdict = "  [green]✓ success[/]" if episode.metadata["success"] else "  [red]✗ failed[/]"
    if episode.status == "max_turns":
        return f"[bold yellow]no answer[/] within {len(episode.turns)} turns (--max-turns){verdict}"
    if episode.status == "repeating":
        return (
            f"[bold yellow]no answer[/]: stopped at turn {len(episode.turns)}, which repeated the "
            f"turns before it, calls and results (--max-repeated-turns){verdict}"
        )
    return f"[bold]answer[/] ({episode.status}): {escape(episode.answer or '—')}{verdict}"


async def run_tasks(options: RunOptions, console: Console) -> list[Episode]:
    """Run every task, print its phase trace and answer, then a summary; return the episodes.

    Raises:
        asyncio.CancelledError: Ctrl-C; the running episode was written as ``interrupted`` and
            one line on stderr says where.
    """
    items = load_task_items(options)
    if options.trajectory is not None:
        check_writable(options.trajectory)
    if notice := default_model_notice(options.policy):
        typer.echo(notice, err=True)
    choice = _choose(options, items)
    servers = _mcp_sources(choice.mcp_config)
    base_env = None
    if choice.toolenv:
        from mcp_servers.toolenv import ToolEnv

        base_env = ToolEnv.builtin(seed=options.seed)
        check_names(choice, (server.name for server in servers), base_env.sources)
    policy: Policy = policy_from_spec(options.policy, base_url=options.base_url)
    if options.trajectory is None:
        options.trajectory = fresh_run_path("trajectories", suffix=".jsonl")
        check_writable(options.trajectory)
    announce(choice)
    config = AgentConfig(
        mode=options.mode,
        max_turns=options.max_turns,
        max_repeated_turns=options.max_repeated_turns,
        prefetch_tools=options.prefetch_tools,
        dispatch=options.dispatch,
        sampling=SamplingParams(
            max_tokens=options.max_tokens, temperature=options.temperature, seed=options.seed
        ),
    )
    search = default_tool_search(index_scope(choice.mcp_config, with_builtin=choice.toolenv))
    if notice := index_notice(search):
        typer.echo(notice, err=True)
    episodes: list[Episode] = []
    console.print(
        f"policy [bold]{options.policy}[/], mode [bold]{options.mode}[/], trajectories → "
        f"{options.trajectory}"
    )
    running = 0  # the number of the task whose episode is running, if any
    try:
        with TrajectoryWriter(options.trajectory) as writer:
            for number, item in enumerate(items, start=1):
                simulated: list[ToolSource] = []
                if base_env is not None:
                    env = (
                        base_env
                        if item.toolenv_task is None
                        else base_env.for_task(item.toolenv_task)
                    )
                    simulated = list(env.sources)
                toolspace = Toolspace([*simulated, *servers], search=search)
                await toolspace.refresh()
                console.rule(f"[{number}/{len(items)}] {item.task_id or 'task'}")
                console.print(item.query, highlight=False)
                agent = Agent(policy, toolspace, config, trajectory=_Recorder(writer, item))
                running = number
                with LiveTrace(console) as trace:
                    episode = await agent.run(item.query, task_id=item.task_id, on_event=trace)
                running = 0
                episodes.append(episode)
                if episode.turns:
                    console.print(trace_table(episode))
                console.print(_outcome(episode), highlight=False)
    except asyncio.CancelledError:
        kept = (
            f"task {running}/{len(items)} kept in {options.trajectory} with status 'interrupted'"
            if running
            else "no episode was running"
        )
        typer.echo(f"interrupted: {kept}; {len(episodes)} of {len(items)} finished", err=True)
        raise
    finally:
        await policy.aclose()
        for source in servers:
            await source.aclose()
    console.rule("summary")
    console.print(summary_table(summarize(episodes)))
    return episodes

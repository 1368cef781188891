"""Real episodes for the algorithm tests: the runtime's Agent with a scripted policy on ToolEnv."""

from __future__ import annotations

import json
from typing import Any

from mcp_servers.toolenv import ToolEnv, builtin_tasks
from paraagent_runtime.agent import Agent, AgentConfig
from paraagent_runtime.policy import ScriptedPolicy
from paraagent_runtime.tasks import Task
from paraagent_runtime.toolspace import Toolspace
from paraagent_runtime.trajectory import Episode


def task(family: str) -> Task:
    return next(t for t in builtin_tasks() if t.family == family)


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def explore(*calls: str) -> str:
    return "<phase>explore</phase>" + "".join(calls)


def execute(*calls: str) -> str:
    return "<phase>execute</phase>" + "".join(calls)


async def run(task: Task, turns: list[str], *, max_turns: int = 8) -> Episode:
    toolspace = Toolspace(ToolEnv.builtin().for_task(task).sources)
    await toolspace.refresh()
    agent = Agent(ScriptedPolicy(turns), toolspace, AgentConfig(strict=True, max_turns=max_turns))
    return await agent.run(task.query, task_id=task.id)

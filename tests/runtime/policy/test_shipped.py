"""The shipped ParaAgent-135M adapter acts in the ParaAct grammar where the base model does not."""

from __future__ import annotations

import pytest

from mcp_servers.toolenv import ToolEnv, builtin_tasks
from paraagent_runtime.agent import Agent, AgentConfig
from paraagent_runtime.policy import policy_from_spec
from paraagent_runtime.policy.base import SamplingParams
from paraagent_runtime.toolspace import Toolspace


@pytest.mark.slow
async def test_shipped_adapter_explores_with_valid_tool_calls() -> None:
    task = builtin_tasks()[0]
    env = ToolEnv.builtin().for_task(task)
    toolspace = Toolspace(env.sources)
    await toolspace.refresh()
    config = AgentConfig(max_turns=2, sampling=SamplingParams(max_tokens=96))
    async with policy_from_spec("paraagent") as policy:
        episode = await Agent(policy, toolspace, config).run(task.query)
    first = episode.turns[0]
    assert first.format_errors == []
    assert first.phase == "explore" and first.calls
    assert all(call.name == "search_tools" for call in first.calls)
    assert all(result.ok for result in first.results)
    assert first.token_ids and first.logprobs and len(first.token_ids) == len(first.logprobs)

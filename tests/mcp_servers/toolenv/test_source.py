"""ToolEnv as runtime sources: one per provider, shared simulator, per-task worlds."""

from __future__ import annotations

import pytest

from mcp_servers.toolenv import ToolEnv, ToolEnvArgumentError, builtin_tasks, toolenv_sources
from paraagent_runtime.sources import ToolSource


async def test_one_source_per_provider_with_model_facing_names() -> None:
    env = ToolEnv.builtin(seed=2)
    assert [s.name for s in env.sources] == env.simulator.providers
    assert all(isinstance(s, ToolSource) for s in env.sources)
    weather = next(s for s in env.sources if s.name == "weather")
    names = {spec.name for spec in await weather.list_tools()}
    assert "weather__get_forecast" in names and all(n.startswith("weather__") for n in names)
    total = sum([len(await s.list_tools()) for s in toolenv_sources(env.simulator)])
    assert total == len(env.records) == len(env.specs())
    result = await weather.call_tool("get_forecast", {"city": "Oslo", "days": 2})
    assert len(result["days"]) == 2
    with pytest.raises(ToolEnvArgumentError):
        await weather.call_tool("get_forecast", {"city": "Oslo", "days": 0})
    await weather.aclose()


async def test_for_task_gives_every_rollout_the_same_world() -> None:
    env = ToolEnv.builtin(seed=0)
    task = builtin_tasks()[0]
    first, second = env.for_task(task), env.for_task(task)
    assert first.seed == second.seed == task.seed and first.simulator is not second.simulator
    call = task.calls[0]
    provider, tool = call.tool.split("/")
    assert await first.simulator.call(
        provider, tool, call.arguments
    ) == await second.simulator.call(provider, tool, call.arguments)
    assert env.with_seed(task.seed + 1).simulator.respond(
        call.tool, call.arguments
    ) != first.simulator.respond(call.tool, call.arguments)

"""ToolEnv as runtime sources: one per provider, shared simulator, per-task worlds."""

from __future__ import annotations

from typing import Any

import pytest

import mcp_servers.toolenv.simulator as simulator
from mcp_servers.toolenv import ToolEnv, builtin_tasks, toolenv_sources
from paraagent_runtime.dispatch import Dispatcher
from paraagent_runtime.sources import ToolSource
from paraagent_runtime.tools import ToolCall, ToolErrorKind
from paraagent_runtime.toolspace import Toolspace
from paraagent_runtime.validation import ArgumentCheck, validate_arguments


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
    await weather.aclose()


async def test_a_runtime_call_is_validated_once_by_the_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[str] = []

    def counting(tool: str, schema: dict[str, Any], arguments: Any) -> str | None:
        checked.append(tool)
        return validate_arguments(tool, schema, arguments)

    check = ArgumentCheck.__call__

    def counting_check(self: ArgumentCheck, tool: str, arguments: Any) -> str | None:
        checked.append(tool)
        return check(self, tool, arguments)

    monkeypatch.setattr(ArgumentCheck, "__call__", counting_check)
    monkeypatch.setattr(simulator, "validate_arguments", counting)
    toolspace = Toolspace(ToolEnv.builtin(seed=2).sources)
    await toolspace.refresh()
    session = await toolspace.new_session()
    session.load(["weather__get_forecast"])
    good, bad = await Dispatcher().run_turn(
        [
            ToolCall(id="a", name="weather__get_forecast", arguments={"city": "Oslo", "days": 2}),
            ToolCall(id="b", name="weather__get_forecast", arguments={"city": "Oslo", "days": 0}),
        ],
        session,
    )
    assert good.ok and len(good.content["days"]) == 2
    assert bad.error_kind is ToolErrorKind.INVALID_ARGUMENTS
    assert bad.error == (
        "invalid arguments for weather__get_forecast: "
        "arguments.days: 0 is less than the minimum of 1"
    )
    assert checked == ["weather__get_forecast"] * 2


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

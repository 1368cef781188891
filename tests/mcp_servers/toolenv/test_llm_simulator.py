"""LLM simulation through the real OpenAI-compatible model server, with a persistent cache."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from mcp_servers.toolenv import ToolEnv, ToolEnvSimulator, builtin_records
from mcp_servers.toolenv.generic import generate_response
from mcp_servers.toolenv.llm_simulator import LLMResponseCache, LLMSimulator, extract_json
from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.policy.base import Message
from paraagent_runtime.policy.openai_http import OpenAICompatiblePolicy
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.policy.server import ModelServer

RECORD = ToolRecord(
    name="get_gauge",
    provider="river",
    description="Returns the water level of a river gauge station.",
    input_schema={
        "type": "object",
        "properties": {"station": {"type": "string"}},
        "required": ["station"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "station": {"type": "string"},
            "level_m": {"type": "number"},
            "trend": {"type": "string", "enum": ["rising", "falling", "steady"]},
        },
        "required": ["station", "level_m", "trend"],
    },
)


def _gauge_model(messages: Sequence[Message]) -> str:
    arguments = json.loads(messages[-1].content.split("Call arguments: ")[1].split("\n")[0])
    level = 2.5 if arguments["station"] == "Bonn" else 1.0
    body = {"station": arguments["station"], "level_m": level, "trend": "rising"}
    return f"```json\n{json.dumps(body)}\n```"


async def _http_policy(scripted: ScriptedPolicy) -> AsyncIterator[OpenAICompatiblePolicy]:
    async with ModelServer(scripted, port=0, model_name="simulator") as server:
        async with OpenAICompatiblePolicy(server.base_url, "simulator", stream=False) as policy:
            yield policy


@pytest.fixture
def scripted() -> ScriptedPolicy:
    return ScriptedPolicy(_gauge_model)


@pytest.fixture
async def http_policy(scripted: ScriptedPolicy) -> AsyncIterator[OpenAICompatiblePolicy]:
    async for policy in _http_policy(scripted):
        yield policy


async def test_llm_answers_through_the_server_and_the_cache_replays(
    tmp_path: Path, scripted: ScriptedPolicy, http_policy: OpenAICompatiblePolicy
) -> None:
    cache_path = tmp_path / "sim.sqlite"
    llm = LLMSimulator(http_policy, cache=cache_path)
    simulator = ToolEnvSimulator([RECORD], seed=4, llm=llm)
    first = await simulator.call("river", "get_gauge", {"station": "Bonn"})
    assert first == {"station": "Bonn", "level_m": 2.5, "trend": "rising"}
    prompt = scripted.calls[0][-1].content
    assert "water level of a river gauge" in prompt and '"station":"Bonn"' in prompt
    again = await simulator.call("river", "get_gauge", {"station": "Bonn"})
    assert again == first and len(scripted.calls) == 1
    assert llm.stats["cache_hits"] == 1 and llm.stats["valid"] == 1
    # Another station: the first answer is shown as an example.
    await simulator.call("river", "get_gauge", {"station": "Koblenz"})
    assert len(scripted.calls) == 2 and "Example response" in scripted.calls[1][-1].content
    # A fresh simulator over the same file (a later run) never asks the model.
    llm.cache.close()
    replay = LLMSimulator(ScriptedPolicy([]), cache=cache_path)
    later = ToolEnvSimulator([RECORD], seed=4, llm=replay)
    assert await later.call("river", "get_gauge", {"station": "Bonn"}) == first
    assert replay.stats["cache_hits"] == 1 and replay.stats["llm_calls"] == 0
    # Another seed is another cache entry.
    other_seed = ToolEnvSimulator([RECORD], seed=5, llm=replay)
    assert await other_seed.call("river", "get_gauge", {"station": "Bonn"}) == generate_response(
        RECORD, {"station": "Bonn"}, seed=5
    )
    assert replay.stats["policy_errors"] == 1


async def test_garbage_falls_back_to_the_generic_response(tmp_path: Path) -> None:
    garbage = ScriptedPolicy(lambda messages: "Sure! The level is high today.")
    async for policy in _http_policy(garbage):
        llm = LLMSimulator(policy, cache=tmp_path / "sim.sqlite")
        simulator = ToolEnvSimulator([RECORD], seed=1, llm=llm)
        response = await simulator.call("river", "get_gauge", {"station": "Bonn"})
        assert response == generate_response(RECORD, {"station": "Bonn"}, seed=1)
        assert llm.stats["invalid_json"] == 1
        # The fallback is cached too: the replay is identical and costs no model call.
        assert await simulator.call("river", "get_gauge", {"station": "Bonn"}) == response
        assert len(garbage.calls) == 1


async def test_schema_violations_are_repaired_field_by_field(tmp_path: Path) -> None:
    sloppy = ScriptedPolicy(
        lambda messages: (
            'Here: {"station": "Bonn", "level_m": "high", "trend": "rising", "note": 1}'
        )
    )
    async for policy in _http_policy(sloppy):
        llm = LLMSimulator(policy, cache=tmp_path / "sim.sqlite")
        response = await ToolEnvSimulator([RECORD], seed=2, llm=llm).call(
            "river", "get_gauge", {"station": "Bonn"}
        )
    assert Draft202012Validator(RECORD.output_schema).is_valid(response)
    assert response["trend"] == "rising" and response["note"] == 1
    assert isinstance(response["level_m"], float)
    assert llm.stats["repaired"] == 1


async def test_handlers_and_pins_take_precedence_over_the_llm(tmp_path: Path) -> None:
    never = ScriptedPolicy([])
    llm = LLMSimulator(never, cache=tmp_path / "sim.sqlite")
    env = ToolEnv(builtin_records() + [RECORD], seed=0, llm=llm)
    weather = await env.simulator.call("weather", "get_current_weather", {"city": "Paris"})
    assert "temperature" in weather
    task_env = env.with_seed(3)
    task_env.simulator.pin("river/get_gauge", {"station": "Bonn"}, {"pinned": True})
    assert await task_env.simulator.call("river", "get_gauge", {"station": "Bonn"}) == {
        "pinned": True
    }
    assert never.calls == [] and task_env.simulator.llm is llm


def test_extract_json_and_bad_inputs(tmp_path: Path) -> None:
    assert extract_json('noise {"a": [1, 2]} trailing') == {"a": [1, 2]}
    for text in ("no json here", "[1, {]"):
        with pytest.raises(ValueError, match="no JSON"):
            extract_json(text)
    with pytest.raises(ConfigError, match="examples"):
        LLMSimulator(ScriptedPolicy([]), cache=tmp_path / "c.sqlite", examples=-1)
    with pytest.raises(ConfigError, match="directory"):
        LLMResponseCache(tmp_path)
    (tmp_path / "not-a-db").write_text("plain text, not sqlite " * 100)
    with pytest.raises(ConfigError, match="cannot open"):
        LLMResponseCache(tmp_path / "not-a-db")

"""Toolspace: name table, routing, duplicates, sessions, sources coming and going."""

from __future__ import annotations

import logging
import sys

import pytest
from mcp.server.mcpserver import MCPServer

from paraagent_runtime.actions import META_TOOLS
from paraagent_runtime.errors import UnknownToolError, UserError
from paraagent_runtime.mcp.config import MCPServerConfig
from paraagent_runtime.mcp.source import MCPToolSource
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.toolspace import ToolSession, Toolspace

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _tool(
    name: str, result: object = None, *, schema: dict | None = None, description: str = ""
) -> FunctionTool:
    async def run(**arguments: object) -> object:
        return {"tool": name, "result": result, "arguments": arguments}

    return FunctionTool(
        run, name=name, description=description or f"the {name} tool", input_schema=schema
    )


async def _toolspace(*sources: FunctionToolSource, **kwargs: object) -> Toolspace:
    toolspace = Toolspace(list(sources), **kwargs)
    await toolspace.refresh()
    return toolspace


def _memory_source(name: str) -> MCPToolSource:
    server = MCPServer(name)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    return MCPToolSource(name, server)


async def test_refresh_maps_model_facing_names_and_routes_calls() -> None:
    weather = FunctionToolSource("weather", [_tool("forecast", 1, schema=CITY)])
    flights = FunctionToolSource("flights", [_tool("forecast", 2), _tool("status", 3)])
    toolspace = await _toolspace(weather, flights)

    assert list(toolspace.tools) == ["weather__forecast", "flights__forecast", "flights__status"]
    assert toolspace.get("flights__status").id == "flights/status"
    assert toolspace.get_by_id("weather/forecast").name == "weather__forecast"
    assert toolspace.route("flights__forecast").source is flights
    assert toolspace.get("nope") is None and toolspace.route("nope") is None
    result = await toolspace.call("flights__forecast", {})
    assert result == {"tool": "forecast", "result": 2, "arguments": {}}
    assert (await toolspace.call("weather__forecast", {"city": "Oslo"}))["arguments"] == {
        "city": "Oslo"
    }


async def test_lossy_names_are_sanitized_and_still_routed() -> None:
    source = FunctionToolSource("my server", [_tool("get.thing", 7)])
    toolspace = await _toolspace(source)
    (name,) = toolspace.tools
    assert name.startswith("my_server__get_thing_") and len(name) <= 64
    assert (await toolspace.call(name, {}))["result"] == 7


@pytest.mark.parametrize("order", [("a__b", "a"), ("a", "a__b")])
async def test_duplicate_model_facing_name_keeps_first_source_and_warns(
    order: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    # "a__b/c" and "a/b__c" both become "a__b__c": the earlier source wins, whatever the order.
    tools = {"a__b": _tool("c", "from a__b"), "a": _tool("b__c", "from a")}
    sources = [FunctionToolSource(name, [tools[name]]) for name in order]
    with caplog.at_level(logging.WARNING, logger="paraagent_runtime.toolspace"):
        toolspace = await _toolspace(*sources)
    assert list(toolspace.tools) == ["a__b__c"]
    assert toolspace.route("a__b__c").source.name == order[0]
    assert (await toolspace.call("a__b__c", {}))["result"] == f"from {order[0]}"
    assert any("same model-facing name" in record.message for record in caplog.records)


def test_two_sources_with_one_name_are_rejected() -> None:
    with pytest.raises(UserError, match="both named 'x'"):
        Toolspace([FunctionToolSource("x", []), FunctionToolSource("x", [])])


async def test_a_session_routes_its_meta_tools_always_and_toolspace_tools_once_loaded() -> None:
    source = FunctionToolSource("w", [_tool("forecast", schema=CITY)])
    toolspace = await _toolspace(source, preload_threshold=0)
    session = await toolspace.new_session()
    assert [spec.name for spec in session.tools] == ["search_tools", "inspect_tool"]
    assert session.route("search_tools").source.name == ""
    assert session.route("w__forecast") is None
    assert session.get("w__forecast").id == "w/forecast"
    session.load(["w__forecast"])
    route = session.route("w__forecast")
    assert route.source is source and route.spec.tool == "forecast"
    assert [spec.name for spec in session.tools] == ["search_tools", "inspect_tool", "w__forecast"]
    assert [spec.name for spec in session.loaded_tools] == ["w__forecast"]
    assert session.route("nope") is None and session.get("nope") is None
    assert "Did you mean: search_tools," in session.unknown_tool_message("search_tool")
    assert "search_tools" not in toolspace.suggest("search_tool")


async def test_unknown_tool_call_raises_with_suggestions() -> None:
    toolspace = await _toolspace(FunctionToolSource("weather", [_tool("forecast")]))
    with pytest.raises(UnknownToolError, match="Did you mean: weather__forecast"):
        await toolspace.call("weather__forcast", {})


async def test_suggest_finds_typos_bare_names_and_ids() -> None:
    toolspace = await _toolspace(
        FunctionToolSource("weather", [_tool("forecast"), _tool("alerts")])
    )
    assert toolspace.suggest("weather__forcast")[0] == "weather__forecast"
    assert toolspace.suggest("forecast") == ["weather__forecast"]
    assert toolspace.suggest("weather/alerts") == ["weather__alerts"]
    assert toolspace.suggest("zzzz") == []
    assert "search_tools" in toolspace.unknown_tool_message("zzzz")


@pytest.mark.parametrize(("threshold", "preloaded"), [(3, True), (2, False)])
async def test_new_session_preloads_small_toolspaces(threshold: int, preloaded: bool) -> None:
    source = FunctionToolSource("s", [_tool("a"), _tool("b"), _tool("c")])
    toolspace = await _toolspace(source, preload_threshold=threshold)
    session = await toolspace.new_session()
    assert session.loaded == ({"s__a", "s__b", "s__c"} if preloaded else set())
    assert session is not await toolspace.new_session()


async def test_session_loads_names() -> None:
    session = ToolSession(await _toolspace())
    assert "x" not in session.loaded
    session.load(iter(["x", "y"]))
    session.load(["x"])
    assert session.loaded == {"x", "y"}


async def test_search_returns_specs_of_current_tools() -> None:
    toolspace = await _toolspace(
        FunctionToolSource("w", [_tool("forecast", description="Weather forecast for a city")]),
        FunctionToolSource(
            "f", [_tool("flight_status", description="Status of a flight by number")]
        ),
    )
    found = await toolspace.search("flight status", top_k=1)
    assert [spec.name for spec in found] == ["f__flight_status"]


async def test_add_and_remove_sources_update_names_and_search() -> None:
    toolspace = await _toolspace(FunctionToolSource("w", [_tool("forecast")]))
    memory = _memory_source("mem")
    await toolspace.add_source(memory)
    assert "mem__echo" in toolspace.tools
    assert list(toolspace.sources) == ["w", "mem"]
    assert await toolspace.call("mem__echo", {"text": "hi"}) in ("hi", {"result": "hi"})
    assert [spec.name for spec in await toolspace.search("echo text back")][0] == "mem__echo"
    with pytest.raises(UserError, match="both named 'mem'"):
        await toolspace.add_source(FunctionToolSource("mem", []))

    await toolspace.remove_source("mem")
    assert "mem__echo" not in toolspace.tools
    assert not memory.connected
    assert [spec.name for spec in await toolspace.search("echo text back")] == []
    with pytest.raises(UserError, match="no tool source named 'mem'"):
        await toolspace.remove_source("mem")


async def test_source_failing_to_list_contributes_nothing_and_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = MCPToolSource(
        "broken",
        MCPServerConfig(
            type="stdio", command=sys.executable, args=["-c", "raise SystemExit(3)"], timeout=5
        ),
    )
    good = FunctionToolSource("w", [_tool("forecast")])
    toolspace = Toolspace([broken, good])
    with caplog.at_level(logging.WARNING, logger="paraagent_runtime.toolspace"):
        await toolspace.refresh()
    assert list(toolspace.tools) == ["w__forecast"]
    assert "MCPConnectionError" in toolspace.source_errors["broken"]
    assert any("failed to list" in record.message for record in caplog.records)
    await toolspace.aclose()


async def test_aclose_closes_every_source() -> None:
    memory = _memory_source("mem")
    toolspace = await _toolspace(memory)
    assert memory.connected
    await toolspace.aclose()
    assert not memory.connected


async def test_meta_tools_are_the_grammars_and_read_only() -> None:
    session = await (await _toolspace(preload_threshold=0)).new_session()
    assert {spec.name for spec in session.tools} == META_TOOLS
    assert all(spec.annotations.read_only for spec in session.tools)


async def test_suggest_in_a_large_toolspace_uses_the_word_shortlist() -> None:
    tools = [_tool(f"op_{i}_records") for i in range(2500)]
    tools.append(_tool("get_bucket_policy"))
    toolspace = await _toolspace(FunctionToolSource("s3", tools))
    assert toolspace.suggest("s3__get_bucket_polcy")[0] == "s3__get_bucket_policy"
    assert toolspace.suggest("get_bucket_policy") == ["s3__get_bucket_policy"]
    assert toolspace.suggest("qqq_zzz") == []

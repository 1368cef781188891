"""Toolspace: name table, routing, duplicates, sessions, sources coming and going."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from paraagent_runtime.actions import META_TOOLS
from paraagent_runtime.dispatch import DispatchConfig, Dispatcher
from paraagent_runtime.errors import UnknownToolError, UserError
from paraagent_runtime.mcp.config import MCPServerConfig
from paraagent_runtime.mcp.source import MCPToolSource
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.tools import ToolCall, ToolErrorKind
from paraagent_runtime.toolspace import ToolSession, Toolspace

NAMES_SERVER = Path(__file__).parent / "mcp" / "names_server.py"
TIME_SERVER = Path(sys.executable).with_name("mcp-server-time")

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

    # A name two sources share is prefixed by the source; a unique one is the tool's own.
    assert list(toolspace.tools) == ["weather__forecast", "flights__forecast", "status"]
    assert toolspace.get("status").id == "flights/status"
    assert toolspace.get_by_id("weather/forecast").name == "weather__forecast"
    assert toolspace.route("flights__forecast").source is flights
    assert toolspace.get("nope") is None and toolspace.route("nope") is None
    # The old <source>__<tool> spelling and the id still resolve; the shared bare name does not.
    assert toolspace.route("flights__status").spec.name == "status"
    assert toolspace.resolve("flights/status") == "status"
    assert toolspace.resolve("forecast") is None
    assert toolspace.spellings("status") == {
        "status",
        "flights/status",
        "flights__status",
    }
    result = await toolspace.call("flights__forecast", {})
    assert result == {"tool": "forecast", "result": 2, "arguments": {}}
    assert (await toolspace.call("weather__forecast", {"city": "Oslo"}))["arguments"] == {
        "city": "Oslo"
    }


async def test_lossy_names_are_sanitized_and_still_routed() -> None:
    source = FunctionToolSource("my server", [_tool("get.thing", 7)])
    toolspace = await _toolspace(source)
    assert list(toolspace.tools) == ["get_thing"]
    for spelling in ("get_thing", "get.thing", "my server__get.thing", "my_server__get_thing"):
        assert (await toolspace.call(spelling, {}))["result"] == 7


@pytest.mark.parametrize("order", [("a__b", "a"), ("a", "a__b")])
async def test_ids_whose_old_names_collided_get_distinct_names(order: tuple[str, str]) -> None:
    # "a__b/c" and "a/b__c" both used to become "a__b__c" (the later one was dropped).
    tools = {"a__b": _tool("c", "from a__b"), "a": _tool("b__c", "from a")}
    toolspace = await _toolspace(*[FunctionToolSource(name, [tools[name]]) for name in order])
    assert sorted(toolspace.tools) == ["b__c", "c"]
    assert (await toolspace.call("c", {}))["result"] == "from a__b"
    assert (await toolspace.call("b__c", {}))["result"] == "from a"
    assert toolspace.resolve("a__b__c") is None  # ambiguous: no alias


def test_two_sources_with_one_name_are_rejected() -> None:
    with pytest.raises(UserError, match="both named 'x'"):
        Toolspace([FunctionToolSource("x", []), FunctionToolSource("x", [])])


async def test_a_session_routes_its_meta_tools_always_and_toolspace_tools_once_loaded() -> None:
    source = FunctionToolSource("w", [_tool("forecast", schema=CITY)])
    toolspace = await _toolspace(source, preload_threshold=0)
    session = await toolspace.new_session()
    assert [spec.name for spec in session.tools] == ["search_tools", "inspect_tool"]
    assert session.route("search_tools").source.name == ""
    assert session.route("forecast") is None
    assert session.get("forecast").id == "w/forecast"
    session.load(["w__forecast"])  # an alias loads the tool under its name
    assert session.loaded == {"forecast"}
    route = session.route("w__forecast")
    assert route.source is source and route.spec.tool == "forecast"
    assert session.route("forecast") is route
    assert [spec.name for spec in session.tools] == ["search_tools", "inspect_tool", "forecast"]
    assert [spec.name for spec in session.loaded_tools] == ["forecast"]
    assert session.route("nope") is None and session.get("nope") is None
    assert "Did you mean: search_tools," in session.unknown_tool_message("search_tool")
    assert "search_tools" not in toolspace.suggest("search_tool")


async def test_unknown_tool_call_raises_with_suggestions() -> None:
    toolspace = await _toolspace(FunctionToolSource("weather", [_tool("forecast")]))
    with pytest.raises(UnknownToolError, match="Did you mean: forecast"):
        await toolspace.call("weather__forcast", {})


async def test_suggest_finds_typos_bare_names_and_ids() -> None:
    toolspace = await _toolspace(
        FunctionToolSource("weather", [_tool("forecast"), _tool("alerts")])
    )
    assert toolspace.suggest("weather__forcast")[0] == "forecast"
    assert toolspace.suggest("forcast")[0] == "forecast"
    assert toolspace.suggest("weather/alerts") == ["alerts"]
    assert toolspace.suggest("zzzz") == []
    assert "search_tools" in toolspace.unknown_tool_message("zzzz")


@pytest.mark.parametrize(("threshold", "preloaded"), [(3, True), (2, False)])
async def test_new_session_preloads_small_toolspaces(threshold: int, preloaded: bool) -> None:
    source = FunctionToolSource("s", [_tool("a"), _tool("b"), _tool("c")])
    toolspace = await _toolspace(source, preload_threshold=threshold)
    session = await toolspace.new_session()
    assert session.loaded == ({"a", "b", "c"} if preloaded else set())
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
    assert [spec.name for spec in found] == ["flight_status"]


async def test_add_and_remove_sources_update_names_and_search() -> None:
    toolspace = await _toolspace(FunctionToolSource("w", [_tool("forecast")]))
    memory = _memory_source("mem")
    await toolspace.add_source(memory)
    assert "echo" in toolspace.tools
    assert list(toolspace.sources) == ["w", "mem"]
    assert await toolspace.call("mem__echo", {"text": "hi"}) in ("hi", {"result": "hi"})
    assert [spec.name for spec in await toolspace.search("echo text back")][0] == "echo"
    with pytest.raises(UserError, match="both named 'mem'"):
        await toolspace.add_source(FunctionToolSource("mem", []))

    await toolspace.remove_source("mem")
    assert "echo" not in toolspace.tools and toolspace.resolve("mem__echo") is None
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
    assert list(toolspace.tools) == ["forecast"]
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
    assert toolspace.suggest("s3__get_bucket_polcy")[0] == "get_bucket_policy"
    assert toolspace.suggest("get_bucket_polcy")[0] == "get_bucket_policy"
    assert toolspace.suggest("qqq_zzz") == []


def _stdio(name: str, command: str, *args: str) -> MCPToolSource:
    config = MCPServerConfig(type="stdio", command=command, args=list(args), timeout=30)
    return MCPToolSource(name, config)


async def _run(toolspace: Toolspace, *calls: tuple[str, dict]) -> list:
    session = await toolspace.new_session()
    turn = [ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)]
    return await Dispatcher(DispatchConfig(max_calls_per_turn=16)).run_turn(turn, session)


async def test_a_real_servers_tools_are_callable_by_their_own_names() -> None:
    toolspace = await _toolspace(_stdio("names", sys.executable, str(NAMES_SERVER)))
    try:
        assert list(toolspace.tools) == [
            "math_factorial",
            "scale",
            "get-tiny-image",
            "a_b",
            "get_current_time",
        ]
        spellings = [
            "math.factorial",
            "math_factorial",
            "names__math.factorial",
            "names/math.factorial",
        ]
        results = await _run(
            toolspace,
            *[(spelling, {"n": 5}) for spelling in spellings],
            ("get-tiny-image", {}),
            ("get_tiny_image", {}),
            ("names__get_tiny_image", {}),
            ("a/b", {}),
            ("names__a/b", {}),
        )
        assert [result.error for result in results] == [None] * len(results)
        assert [result.content["value"] for result in results[:4]] == [120] * 4
        assert {result.content["tool"] for result in results[4:]} == {"get-tiny-image", "a/b"}
    finally:
        await toolspace.aclose()


@pytest.mark.skipif(not TIME_SERVER.exists(), reason="mcp-server-time is not installed")
async def test_only_names_two_servers_share_get_a_source_prefix() -> None:
    toolspace = await _toolspace(
        _stdio("names", sys.executable, str(NAMES_SERVER)), _stdio("time", str(TIME_SERVER))
    )
    try:
        names = list(toolspace.tools)
        assert "names__get_current_time" in names and "time__get_current_time" in names
        assert "convert_time" in names and "math_factorial" in names
        assert toolspace.get("time__get_current_time").id == "time/get_current_time"
        (shared,) = await _run(toolspace, ("get_current_time", {}))
        assert shared.error_kind is ToolErrorKind.UNKNOWN_TOOL
        assert (
            "names__get_current_time" in shared.error and "time__get_current_time" in shared.error
        )
    finally:
        await toolspace.aclose()


async def test_dialect_schemas_are_normalized_enforced_or_listed_unusable() -> None:
    toolspace = await _toolspace(_stdio("names", sys.executable, str(NAMES_SERVER)))
    try:
        shown = toolspace.get("scale").input_schema
        assert shown["properties"]["factor"] == {"type": "number"}
        assert shown["properties"]["options"]["type"] == "object"
        assert shown["properties"]["point"]["type"] == "array"
        assert shown["properties"]["label"] == {}
        ok, wrong, nested, integral, broken = await _run(
            toolspace,
            ("scale", {"factor": 2.5, "point": [1, 2], "label": ["any", 1]}),
            ("scale", {"factor": "2", "point": [1, 2]}),
            ("scale", {"factor": 2, "point": [1, 2], "options": {"round": "yes"}}),
            ("math.factorial", {"n": 5.0}),
            ("broken", {"when": "today"}),
        )
        assert ok.ok and ok.content["arguments"]["factor"] == 2.5
        assert wrong.error_kind is ToolErrorKind.INVALID_ARGUMENTS
        assert "arguments.factor: '2' is not of type 'number'" in wrong.error
        assert "arguments.options.round: 'yes' is not of type 'boolean'" in nested.error
        assert integral.error_kind is ToolErrorKind.INVALID_ARGUMENTS
        assert "arguments.n: 5.0 is not of type 'integer'" in integral.error
        assert "broken" not in toolspace.tools
        reason = toolspace.unusable_tools["names/broken"]
        assert "properties/when/type" in reason and "'date'" in reason
        assert broken.error_kind is ToolErrorKind.UNKNOWN_TOOL
        assert broken.error == f"tool 'broken' cannot be used: {reason}."
    finally:
        await toolspace.aclose()


async def test_a_function_tool_in_a_dialect_is_normalized_too() -> None:
    schema = {"type": "dict", "properties": {"x": {"type": "float"}}, "required": ["x"]}
    toolspace = await _toolspace(FunctionToolSource("fn", [_tool("half", schema=schema)]))
    assert toolspace.get("half").input_schema["type"] == "object"
    good, bad = await _run(toolspace, ("half", {"x": 1}), ("half", {"x": "1"}))
    assert good.ok and bad.error_kind is ToolErrorKind.INVALID_ARGUMENTS

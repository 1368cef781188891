"""The MCP face through the real SDK: in-memory client round trip and the stdio entry point."""

from __future__ import annotations

import sys

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from mcp_servers.toolenv import ToolEnv, builtin_records
from mcp_servers.toolenv.server import build_server
from paraagent_runtime.errors import ConfigError


async def test_in_memory_round_trip_with_real_schemas() -> None:
    env = ToolEnv.builtin(seed=4)
    async with Client(build_server(env)) as client:
        listed = (await client.list_tools()).tools
        assert len(listed) == len(builtin_records())
        forecast = next(t for t in listed if t.name == "weather__get_forecast")
        assert forecast.input_schema["required"] == ["city"]
        assert forecast.input_schema["properties"]["days"]["maximum"] == 7
        assert forecast.annotations is not None and forecast.annotations.read_only_hint
        send = next(t for t in listed if t.name == "email__send_email")
        assert send.annotations is not None and send.annotations.destructive_hint
        result = await client.call_tool("weather__get_forecast", {"city": "Paris", "days": 2})
        assert not result.is_error
        assert result.structured_content == await env.simulator.call(
            "weather", "get_forecast", {"city": "Paris", "days": 2}
        )
        bad = await client.call_tool("weather__get_forecast", {"city": "Paris", "days": 99})
        assert bad.is_error and bad.content[0].text == (
            "ToolEnvArgumentError: invalid arguments for weather__get_forecast: "
            "arguments.days: 99 is greater than the maximum of 7"
        )
        missing = await client.call_tool("weather__get_forecast", {"city": "Atlantis"})
        assert missing.is_error and "unknown city" in missing.content[0].text
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("weather__get_snowfall", {})


@pytest.mark.slow
async def test_stdio_entry_point_serves_the_catalog() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_servers.toolenv", "--seed", "4"]
    )
    async with Client(stdio_client(params)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "aviation__get_flight" in names
        result = await client.call_tool(
            "currency__convert_currency",
            {"amount": 10, "from_currency": "USD", "to_currency": "USD"},
        )
        assert result.structured_content["converted_amount"] == 10


async def test_tools_list_is_paged_and_the_cursor_is_checked() -> None:
    server = build_server(ToolEnv.builtin(), page_size=20)
    async with Client(server) as client:
        names: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await client.list_tools(cursor=cursor)
            names.extend(tool.name for tool in page.tools)
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == 4 and len(page.tools) == len(builtin_records()) - 60
        assert len(set(names)) == len(builtin_records()) and "weather__get_forecast" in names
        for bad in ("abc", "-5", "100000"):
            with pytest.raises(MCPError, match="invalid tools/list cursor"):
                await client.list_tools(cursor=bad)
    with pytest.raises(ValueError, match="page_size"):
        build_server(ToolEnv.builtin(), page_size=0)


async def test_gateway_searches_and_calls_any_catalog_tool() -> None:
    env = ToolEnv.builtin(seed=2)
    async with Client(build_server(env, gateway=True)) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == [
            "search_tools",
            "call_tool",
        ]
        found = await client.call_tool(
            "search_tools", {"query": "current weather in a city", "top_k": 3}
        )
        cards = found.structured_content["tools"]
        assert len(cards) == 3 and "weather__get_current_weather" in [
            card["name"] for card in cards
        ]
        called = await client.call_tool(
            "call_tool", {"name": "weather__get_current_weather", "arguments": {"city": "Rome"}}
        )
        assert called.structured_content == await env.simulator.call(
            "weather", "get_current_weather", {"city": "Rome"}
        )
        invalid = await client.call_tool(
            "call_tool", {"name": "weather__get_current_weather", "arguments": {}}
        )
        assert invalid.is_error and "ToolEnvArgumentError" in invalid.content[0].text
        with pytest.raises(MCPError, match="Unknown tool: nope__x"):
            await client.call_tool("call_tool", {"name": "nope__x"})
        with pytest.raises(MCPError, match="gateway serves"):
            await client.call_tool("weather__get_current_weather", {"city": "Rome"})
        with pytest.raises(MCPError, match="non-empty query"):
            await client.call_tool("search_tools", {"query": " "})


def test_serve_rejects_bad_options() -> None:
    from typer.testing import CliRunner

    from mcp_servers.toolenv.catalog.cli import toolenv_app
    from mcp_servers.toolenv.serve import catalog_records

    runner = CliRunner()
    assert runner.invoke(toolenv_app, ["serve", "--transport", "carrier-pigeon"]).exit_code == 2
    assert runner.invoke(toolenv_app, ["serve", "--page-size", "0"]).exit_code == 2
    with pytest.raises(ConfigError, match="unknown catalog"):
        catalog_records("half")
    assert len(catalog_records("builtin")) == len(builtin_records())

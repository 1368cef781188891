"""The MCP face through the real SDK: in-memory client round trip and the stdio entry point."""

from __future__ import annotations

import sys

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from mcp_servers.toolenv import ToolEnv, builtin_records
from mcp_servers.toolenv.server import build_server


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
        assert bad.is_error and "ToolEnvArgumentError" in bad.content[0].text
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

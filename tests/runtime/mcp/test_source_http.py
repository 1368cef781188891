"""MCPToolSource over streamable HTTP and SSE against SDK servers the test starts on loopback."""

from __future__ import annotations

import asyncio

import pytest

from paraagent_runtime.errors import MCPConnectionError, ToolExecutionError
from paraagent_runtime.mcp import MCPServerConfig, MCPTimeoutError, MCPToolSource, ProgressUpdate

from .conftest import LoopbackServer
from .servers import build_demo_server


async def test_streamable_http_calls_progress_and_timeout() -> None:
    events: list[str] = []
    updates: list[ProgressUpdate] = []
    app = build_demo_server(events).streamable_http_app()
    async with LoopbackServer(app) as http:
        config = MCPServerConfig(
            type="http",
            url=f"http://127.0.0.1:{http.port}/mcp",
            headers={"X-Test": "1"},
            bearerToken="t0k",
            timeout=0.5,
        )
        source = MCPToolSource("web", config, on_progress=updates.append)
        try:
            specs = {spec.tool: spec for spec in await source.list_tools()}
            assert specs["add"].annotations.read_only
            results = await asyncio.gather(
                *(source.call_tool("add", {"a": i, "b": i}) for i in range(16))
            )
            assert [r["result"] for r in results] == [2 * i for i in range(16)]
            assert await source.call_tool("sleep", {"seconds": 0}) == {"result": "slept"}
            assert updates and updates[0].message == "half way"
            with pytest.raises(ToolExecutionError, match="boom"):
                await source.call_tool("fail", {"reason": "boom"})
            with pytest.raises(MCPTimeoutError):
                await source.call_tool("sleep", {"seconds": 30})
            for _ in range(100):
                if events:
                    break
                await asyncio.sleep(0.02)
            assert events == ["sleep cancelled"]
        finally:
            await source.aclose()


async def test_sse_transport() -> None:
    app = build_demo_server([]).sse_app()
    async with LoopbackServer(app) as http:
        config = MCPServerConfig(type="sse", url=f"http://127.0.0.1:{http.port}/sse", timeout=5)
        source = MCPToolSource("legacy", config)
        try:
            assert await source.call_tool("add", {"a": 20, "b": 22}) == {"result": 42}
        finally:
            await source.aclose()


async def test_unreachable_http_server_is_a_connection_error() -> None:
    async with LoopbackServer(build_demo_server([]).streamable_http_app()) as http:
        port = http.port
    source = MCPToolSource(
        "gone", MCPServerConfig(type="http", url=f"http://127.0.0.1:{port}/mcp", timeout=5)
    )
    with pytest.raises(MCPConnectionError, match="'gone': cannot connect"):
        await source.list_tools()
    await source.aclose()

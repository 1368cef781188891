"""paraagent's own MCP server: run_task with progress, the gateway, and the HTTP bearer guard."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client

from paraagent_runtime.agent import AgentConfig
from paraagent_runtime.dispatch import DispatchConfig
from paraagent_runtime.errors import ConfigError, MCPConnectionError, ToolExecutionError
from paraagent_runtime.keyword_search import KeywordToolSearch
from paraagent_runtime.mcp import MCPServerConfig, MCPToolSource, ProgressUpdate, ReconnectPolicy
from paraagent_runtime.mcp.server import build_paraagent_server, http_app
from paraagent_runtime.mcp.serving import running_server
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.toolspace import Toolspace

from .conftest import HERE, LoopbackServer, stdio_config
from .servers import build_demo_server, build_raw_server

SCRIPT = [
    "<phase>execute</phase>\n"
    '<tool_call>{"name": "demo__add", "arguments": {"a": 2, "b": 3}}</tool_call>\n'
    '<tool_call>{"name": "demo__add", "arguments": {"a": 10, "b": 1}}</tool_call>',
    "<answer>5 and 11</answer>",
]


async def demo_toolspace() -> Toolspace:
    toolspace = Toolspace([MCPToolSource("demo", build_demo_server([]))])
    await toolspace.refresh()
    return toolspace


async def test_run_task_returns_answer_trajectory_and_progress() -> None:
    toolspace = await demo_toolspace()
    server = build_paraagent_server(toolspace, policy=ScriptedPolicy(SCRIPT))
    updates: list[ProgressUpdate] = []
    front = MCPToolSource("paraagent", server, on_progress=updates.append)
    try:
        names = {spec.tool for spec in await front.list_tools()}
        assert names == {"run_task", "search_tools", "call_tool"}
        result = await front.call_tool("run_task", {"task": "add things", "max_turns": 4})
    finally:
        await front.aclose()
        await toolspace.aclose()
    assert result["status"] == "answered" and result["answer"] == "5 and 11"
    assert result["n_calls"] == 2
    first = result["turns"][0]
    assert first["phase"] == "execute"
    assert [call["ok"] for call in first["calls"]] == [True, True]
    messages = [update.message for update in updates]
    assert messages[0] == "turn 1: execute (2 calls)"
    assert messages.count("turn 1: calling demo__add") == 2
    assert messages.count("turn 1: demo__add ok") == 2
    assert [update.progress for update in updates] == list(range(1, len(updates) + 1))


async def test_run_task_rejects_a_bad_max_turns() -> None:
    toolspace = await demo_toolspace()
    front = MCPToolSource(
        "paraagent", build_paraagent_server(toolspace, policy=ScriptedPolicy(SCRIPT))
    )
    try:
        with pytest.raises(ToolExecutionError, match="max_turns: must be at least 1"):
            await front.call_tool("run_task", {"task": "x", "max_turns": 0})
        with pytest.raises(ToolExecutionError, match="mode"):
            await front.call_tool("run_task", {"task": "x", "mode": "chaos"})
    finally:
        await front.aclose()
        await toolspace.aclose()


async def test_gateway_search_and_call() -> None:
    toolspace = await demo_toolspace()
    front = MCPToolSource("paraagent", build_paraagent_server(toolspace))
    try:
        assert {spec.tool for spec in await front.list_tools()} == {"search_tools", "call_tool"}
        hits = await front.call_tool("search_tools", {"query": "add two integers", "top_k": 3})
        found = hits["result"] if isinstance(hits, dict) else hits
        assert found[0]["name"] == "add"
        assert found[0]["parameters"]["required"] == ["a", "b"]
        value = await front.call_tool(
            "call_tool", {"name": "demo__add", "arguments": {"a": 4, "b": 5}}
        )
        assert value == {"result": 9}
        with pytest.raises(ToolExecutionError, match="unknown tool 'demo__ad'. Did you mean: add"):
            await front.call_tool("call_tool", {"name": "demo__ad", "arguments": {}})
        with pytest.raises(ToolExecutionError, match="invalid arguments for demo__add"):
            await front.call_tool("call_tool", {"name": "demo__add", "arguments": {"a": "x"}})
        with pytest.raises(ToolExecutionError, match="demo__fail: .*it broke"):
            await front.call_tool(
                "call_tool", {"name": "demo__fail", "arguments": {"reason": "it broke"}}
            )
        with pytest.raises(ToolExecutionError, match="top_k"):
            await front.call_tool("search_tools", {"query": "x", "top_k": 0})
    finally:
        await front.aclose()
        await toolspace.aclose()


async def test_gateway_calls_take_the_dispatchers_limits() -> None:
    toolspace = await demo_toolspace()
    limits = DispatchConfig(call_timeout_s=0.5, read_only_retries=0)
    server = build_paraagent_server(toolspace, agent_config=AgentConfig(dispatch=limits))
    front = MCPToolSource("paraagent", server)
    try:
        with anyio.fail_after(20):
            with pytest.raises(ToolExecutionError, match="sleep: timeout: no result within 0.5 s"):
                await front.call_tool("call_tool", {"name": "sleep", "arguments": {"seconds": 10}})
            # Spelled as a model would, the tool's own name with a source prefix still resolves.
            value = await front.call_tool(
                "call_tool", {"name": "demo__add", "arguments": {"a": 1, "b": 2}}
            )
    finally:
        await front.aclose()
        await toolspace.aclose()
    assert value == {"result": 3}


class StillBuildingIndex(KeywordToolSearch):
    """A keyword search that answers once the test lets it (an index still being built)."""

    def __init__(self) -> None:
        super().__init__()
        self.built = asyncio.Event()

    async def search(self, query: str, *, top_k: int = 5) -> list[tuple[str, float]]:
        await self.built.wait()
        return await super().search(query, top_k=top_k)


async def test_search_tools_reports_progress_while_the_index_builds() -> None:
    index = StillBuildingIndex()
    toolspace = Toolspace([MCPToolSource("demo", build_demo_server([]))], search=index)
    await toolspace.refresh()
    messages: list[str | None] = []

    def on_progress(update: ProgressUpdate) -> None:
        messages.append(update.message)
        index.built.set()

    front = MCPToolSource("paraagent", build_paraagent_server(toolspace), on_progress=on_progress)
    try:
        with anyio.fail_after(20):
            hits = await front.call_tool("search_tools", {"query": "add two integers"})
    finally:
        await front.aclose()
        await toolspace.aclose()
    assert messages == ["building the tool index (1s)"]
    found = hits["result"] if isinstance(hits, dict) else hits
    assert found[0]["name"] == "add"


def test_empty_server_is_refused() -> None:
    with pytest.raises(ConfigError, match="nothing to serve"):
        build_paraagent_server(Toolspace([]), gateway=False)


def test_public_bind_requires_a_token() -> None:
    server = build_paraagent_server(Toolspace([]))
    with pytest.raises(ConfigError, match=r"binding 0\.0\.0\.0 .*bearer token"):
        http_app(server, host="0.0.0.0")
    assert http_app(server, host="127.0.0.1") is not None


async def test_http_with_token_refuses_requests_without_it() -> None:
    toolspace = await demo_toolspace()
    server = build_paraagent_server(toolspace)
    async with LoopbackServer(http_app(server, host="0.0.0.0", token="s3cret")) as http:
        url = f"http://127.0.0.1:{http.port}/mcp"
        async with httpx2.AsyncClient() as raw:
            refused = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            wrong = await raw.post(url, json={}, headers={"Authorization": "Bearer nope"})
        assert refused.status_code == 401 and wrong.status_code == 401
        assert json.loads(refused.text)["error"] == "missing or invalid bearer token"
        anonymous = MCPToolSource("pa", MCPServerConfig(type="http", url=url, timeout=5))
        with pytest.raises(MCPConnectionError, match="'pa': cannot connect"):
            await anonymous.connect()
        await anonymous.aclose()
        authorized = MCPToolSource(
            "pa", MCPServerConfig(type="http", url=url, bearerToken="s3cret", timeout=5)
        )
        try:
            value = await authorized.call_tool(
                "call_tool", {"name": "demo__add", "arguments": {"a": 1, "b": 1}}
            )
        finally:
            await authorized.aclose()
    await toolspace.aclose()
    assert value == {"result": 2}


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


async def test_any_loopback_bind_checks_host_and_origin() -> None:
    server = build_paraagent_server(Toolspace([]))
    # 127.0.0.2 is loopback too: no token needed, but a rebinding Host or Origin is refused.
    async with LoopbackServer(http_app(server, host="127.0.0.2")) as http:
        url = f"http://127.0.0.1:{http.port}/mcp"
        bound = f"127.0.0.2:{http.port}"
        async with httpx2.AsyncClient() as raw:
            rebound = await raw.post(
                url, json=INITIALIZE, headers={**MCP_HEADERS, "Host": f"evil.example:{http.port}"}
            )
            foreign = await raw.post(
                url,
                json=INITIALIZE,
                headers={**MCP_HEADERS, "Host": bound, "Origin": "http://evil.example"},
            )
            own = await raw.post(
                url,
                json=INITIALIZE,
                headers={**MCP_HEADERS, "Host": bound, "Origin": f"http://{bound}"},
            )
    assert rebound.status_code == 421
    assert foreign.status_code == 403
    assert own.status_code == 200


def test_loopback_hosts_follow_the_bound_address() -> None:
    from paraagent_runtime.mcp.server import loopback_security

    assert loopback_security("0.0.0.0") is None
    v4 = loopback_security("127.0.0.1")
    assert v4 is not None and {"127.0.0.1:*", "localhost:*"} <= set(v4.allowed_hosts)
    v6 = loopback_security("::1")
    assert v6 is not None and "[::1]:*" in v6.allowed_hosts
    other = loopback_security("127.0.0.2")
    assert other is not None and set(other.allowed_hosts) == {"127.0.0.2", "127.0.0.2:*"}


async def test_bearer_scheme_is_case_insensitive() -> None:
    toolspace = await demo_toolspace()
    server = build_paraagent_server(toolspace)
    async with LoopbackServer(http_app(server, host="127.0.0.1", token="s3cret")) as http:
        url = f"http://127.0.0.1:{http.port}/mcp"
        async with httpx2.AsyncClient() as raw:
            answers = [
                await raw.post(
                    url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": header}
                )
                for header in ("bearer s3cret", "BEARER s3cret", "Basic s3cret", "bearer nope")
            ]
    await toolspace.aclose()
    assert [answer.status_code for answer in answers] == [200, 200, 401, 401]


async def test_sdk_client_sees_gateway_tool_annotations() -> None:
    toolspace = await demo_toolspace()
    async with Client(build_paraagent_server(toolspace)) as client:
        tools: dict[str, Any] = {tool.name: tool for tool in (await client.list_tools()).tools}
    await toolspace.aclose()
    assert tools["search_tools"].annotations.read_only_hint is True


PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA"
    "hKmMIQAAAABJRU5ErkJggg=="
)


async def gateway_call(result: types.CallToolResult, **server: Any) -> types.CallToolResult:
    """Call a downstream tool answering ``result`` through the gateway, with a real SDK client."""
    raw = build_raw_server(
        tools=[types.Tool(name="shot", input_schema={"type": "object"})], result=result
    )
    toolspace = Toolspace([MCPToolSource("cam", raw)])
    await toolspace.refresh()
    try:
        async with Client(build_paraagent_server(toolspace, **server)) as client:
            return await client.call_tool("call_tool", {"name": "shot", "arguments": {}})
    finally:
        await toolspace.aclose()


async def test_gateway_keeps_content_blocks() -> None:
    result = await gateway_call(
        types.CallToolResult(
            content=[
                types.TextContent(text="a shot"),
                types.ImageContent(data=PIXEL, mime_type="image/png"),
                types.AudioContent(data="UklGRg==", mime_type="audio/wav"),
                types.ResourceLink(name="full", uri="file:///tmp/full.png"),
            ],
            structured_content={"width": 1},
        )
    )
    assert [block.type for block in result.content] == ["text", "image", "audio", "resource_link"]
    image = result.content[1]
    assert isinstance(image, types.ImageContent)
    assert image.data == PIXEL and image.mime_type == "image/png"
    assert result.structured_content == {"width": 1}
    assert not result.is_error


async def test_gateway_caps_an_oversized_result_with_a_marker() -> None:
    big = types.CallToolResult(
        content=[
            types.TextContent(text="x" * 50_000),
            types.ImageContent(data=PIXEL, mime_type="image/png"),
        ],
        structured_content={"rows": ["y" * 20_000]},
    )
    default = await gateway_call(big)
    limit = DispatchConfig().max_result_chars
    texts = [getattr(block, "text", None) for block in default.content]
    assert texts[0] == "x" * limit
    assert texts[1] == f"[image/png block of {len(PIXEL)} chars left out]"
    total = 50_000 + len(PIXEL)
    structured = len(json.dumps(big.structured_content))
    assert texts[2] == (
        f"[truncated at {limit} chars: content of {total} chars to {limit}; "
        f"structured content of {structured} chars left out]"
    )
    assert default.structured_content is None
    assert default.meta is not None
    assert default.meta["io.paraagent/truncated"] == {
        "content_chars": total,
        "structured_chars": structured,
    }
    small = await gateway_call(
        big, agent_config=AgentConfig(dispatch=DispatchConfig(max_result_chars=100))
    )
    assert getattr(small.content[0], "text", None) == "x" * 100
    # A result whose content and structured form are each within the limit passes unchanged.
    mirrored = types.CallToolResult(
        content=[types.TextContent(text="z" * 10_000)], structured_content={"z": "z" * 9_990}
    )
    assert (await gateway_call(mirrored)).structured_content == {"z": "z" * 9_990}


def hanging_source() -> MCPToolSource:
    """A stdio server that never answers the handshake (it reads until its stdin closes)."""
    return MCPToolSource("hang", stdio_config("-c", "import sys; sys.stdin.read()"))


async def test_tools_list_answers_at_once_then_list_changed() -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    toolspace = Toolspace([hanging_source(), MCPToolSource("demo", build_demo_server([]))])
    with anyio.fail_after(20):
        async with (
            running_server(toolspace) as server,
            Client(server, mode="legacy", message_handler=on_message) as client,
        ):
            started = time.perf_counter()
            listed = await client.list_tools()
            elapsed = time.perf_counter() - started
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            await changed.wait()
            # A known tool does not wait for the hanging server.
            added = await client.call_tool(
                "call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}}
            )
        await toolspace.aclose()
    assert {tool.name for tool in listed.tools} == {"search_tools", "call_tool"}
    assert elapsed < 1.0
    assert added.structured_content == {"result": 5}


FLAKY = """
import pathlib, runpy, sys
marker = pathlib.Path(sys.argv[1])
if not marker.exists():
    marker.write_text("failed once")
    sys.exit(1)
runpy.run_path(sys.argv[2], run_name="__main__")
"""


async def test_a_server_that_failed_at_start_is_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fast = ReconnectPolicy(initial_backoff_s=0.01)
    flaky = MCPToolSource(
        "flaky",
        stdio_config("-c", FLAKY, str(tmp_path / "marker"), str(HERE / "demo_server.py")),
        reconnect=fast,
    )
    toolspace = Toolspace([flaky])
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    caplog.set_level(logging.INFO, logger="paraagent_runtime.mcp.startup")
    with anyio.fail_after(30):
        async with (
            running_server(toolspace, reconnect=fast) as server,
            Client(server, mode="legacy", message_handler=on_message) as client,
        ):
            await changed.wait()
            echoed = await client.call_tool(
                "call_tool", {"name": "echo", "arguments": {"text": "back"}}
            )
        await toolspace.aclose()
    assert echoed.structured_content == {"result": "back"}
    lines = [record.getMessage() for record in caplog.records]
    assert any("flaky retrying in" in line and "after 1 failed attempt" in line for line in lines)
    assert lines[-1].startswith("serve: 1 of 1 sources ready")


class SlowLoadingPolicy(ScriptedPolicy):
    """A scripted policy with a model that loads until the test lets it."""

    def __init__(self, turns: list[str]) -> None:
        super().__init__(turns)
        self.loading = threading.Event()
        self.may_finish = threading.Event()

    def load(self) -> None:
        self.loading.set()
        self.may_finish.wait(20)


async def test_model_preloads_and_run_task_reports_progress_while_it_loads() -> None:
    toolspace = Toolspace([MCPToolSource("demo", build_demo_server([]))])
    policy = SlowLoadingPolicy(SCRIPT)
    updates: list[ProgressUpdate] = []

    def on_progress(update: ProgressUpdate) -> None:
        updates.append(update)
        if update.message and update.message.startswith("loading the model"):
            policy.may_finish.set()

    with anyio.fail_after(20):
        async with running_server(toolspace, policy=policy) as server:
            # Loading began at start, before any client asked for anything.
            assert await asyncio.to_thread(policy.loading.wait, 10)
            front = MCPToolSource("paraagent", server, on_progress=on_progress)
            try:
                result = await front.call_tool("run_task", {"task": "add things"})
            finally:
                await front.aclose()
        await toolspace.aclose()
    assert result["answer"] == "5 and 11"
    assert updates[0].message == "loading the model (0s)"

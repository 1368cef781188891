"""MCPToolSource against in-process SDK servers (both protocol eras where behaviour differs)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import mcp_types as types
import pytest

from paraagent_runtime.dispatch import DispatchConfig, Dispatcher
from paraagent_runtime.errors import ToolExecutionError
from paraagent_runtime.mcp import (
    ElicitationRequest,
    ElicitationResponse,
    MCPServerConfig,
    MCPTimeoutError,
    MCPToolSource,
    ProgressUpdate,
)
from paraagent_runtime.sources import ToolSource
from paraagent_runtime.tools import ToolCall
from paraagent_runtime.toolspace import Toolspace

from .servers import build_demo_server, build_raw_server

Protocol = Literal["auto", "legacy"]


def memory_source(events: list[str], protocol: Protocol = "auto", **kwargs: Any) -> MCPToolSource:
    config = MCPServerConfig(
        type="memory",
        protocol=protocol,
        timeout=kwargs.pop("timeout", 10.0),
        **{k: kwargs.pop(k) for k in list(kwargs) if k in ("allowedTools", "excludedTools")},
    )
    return MCPToolSource("demo", config, server=build_demo_server(events), **kwargs)


async def test_is_a_tool_source_and_lists_annotated_tools() -> None:
    source = memory_source([])
    assert isinstance(source, ToolSource)
    try:
        specs = {spec.tool: spec for spec in await source.list_tools()}
    finally:
        await source.aclose()
    assert specs["add"].id == "demo/add" and specs["add"].name == "demo__add"
    assert specs["add"].input_schema["required"] == ["a", "b"]
    assert specs["add"].output_schema is not None
    add = specs["add"].annotations
    assert add.read_only and add.idempotent and not add.destructive and not add.open_world
    delete = specs["delete"].annotations
    assert delete.destructive and not delete.read_only and delete.title == "Delete it"
    upsert = specs["upsert"].annotations
    assert upsert.idempotent and not upsert.destructive
    # No hints at all: the MCP defaults (destructive, open world) apply.
    assert specs["plain"].annotations.destructive and specs["plain"].annotations.open_world


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_results_keep_structure(protocol: Protocol) -> None:
    source = memory_source([], protocol)
    try:
        assert await source.call_tool("add", {"a": 2, "b": 3}) == {"result": 5}
        assert await source.call_tool("plain", {"text": "hi"}) == "hi"
        assert await source.call_tool("as_json", {}) == {"k": [1, 2]}
    finally:
        await source.aclose()


async def test_tool_error_raises_with_the_server_message() -> None:
    source = memory_source([])
    try:
        with pytest.raises(ToolExecutionError, match=r"demo/fail: .*disk on fire"):
            await source.call_tool("fail", {"reason": "disk on fire"})
        with pytest.raises(ToolExecutionError, match="Unknown tool"):
            await source.call_tool("missing", {})
    finally:
        await source.aclose()


async def test_tool_filters_apply_to_listing_and_calls() -> None:
    source = memory_source([], allowedTools=["a*", "plain"], excludedTools=["as_json"])
    try:
        assert sorted(spec.tool for spec in await source.list_tools()) == ["add", "ask", "plain"]
        with pytest.raises(ToolExecutionError, match="excluded"):
            await source.call_tool("delete", {"path": "/"})
    finally:
        await source.aclose()


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_timeout_cancels_the_request_on_the_server(protocol: Protocol) -> None:
    events: list[str] = []
    source = memory_source(events, protocol, timeout=0.3)
    try:
        with pytest.raises(MCPTimeoutError, match=r"demo/sleep: no result within 0\.3s"):
            await source.call_tool("sleep", {"seconds": 30})
        for _ in range(100):
            if events:
                break
            await asyncio.sleep(0.02)
        assert events == ["sleep cancelled"]
        assert await source.call_tool("add", {"a": 1, "b": 1}) == {"result": 2}
    finally:
        await source.aclose()


async def test_caller_cancellation_reaches_the_server() -> None:
    events: list[str] = []
    source = memory_source(events)
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(source.call_tool("sleep", {"seconds": 30}), 0.3)
        for _ in range(100):
            if events:
                break
            await asyncio.sleep(0.02)
        assert events == ["sleep cancelled"]
    finally:
        await source.aclose()


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_progress_is_forwarded(protocol: Protocol) -> None:
    updates: list[ProgressUpdate] = []
    source = memory_source([], protocol, on_progress=updates.append)
    try:
        assert await source.call_tool("sleep", {"seconds": 0}) == {"result": "slept"}
    finally:
        await source.aclose()
    assert updates == [ProgressUpdate("demo", "sleep", 0.5, 1.0, "half way")]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_list_changed_invalidates_and_calls_back(protocol: Protocol) -> None:
    changed = asyncio.Event()
    seen: list[str] = []

    async def on_change(name: str) -> None:
        seen.append(name)
        changed.set()

    source = memory_source([], protocol, on_tools_changed=on_change)
    try:
        before = {spec.tool for spec in await source.list_tools()}
        assert "fresh" not in before
        await source.call_tool("grow", {})
        await asyncio.wait_for(changed.wait(), 5)
        after = {spec.tool for spec in await source.list_tools()}
    finally:
        await source.aclose()
    assert seen[0] == "demo"
    assert after == before | {"fresh"}


async def test_elicitation_is_forwarded_to_the_callback() -> None:
    requests: list[ElicitationRequest] = []

    async def answer(request: ElicitationRequest) -> ElicitationResponse:
        requests.append(request)
        return ElicitationResponse(action="accept", content={"email": "a@b.c"})

    source = memory_source([], "legacy", on_elicitation=answer)
    try:
        assert await source.call_tool("ask", {}) == {"result": "accept:a@b.c"}
    finally:
        await source.aclose()
    assert requests[0].source == "demo" and requests[0].message == "Which email?"
    assert requests[0].requested_schema is not None
    assert "email" in requests[0].requested_schema["properties"]


async def test_elicitation_without_callback_is_declined() -> None:
    source = memory_source([], "legacy")
    try:
        assert await source.call_tool("ask", {}) == {"result": "decline:"}
    finally:
        await source.aclose()


async def test_paged_tool_listing_is_complete() -> None:
    tools = [types.Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(23)]
    server = build_raw_server(tools=tools, result=types.CallToolResult(content=[]), page_size=5)
    source = MCPToolSource("raw", server)
    try:
        names = [spec.tool for spec in await source.list_tools()]
    finally:
        await source.aclose()
    assert names == [f"t{i}" for i in range(23)]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_structured_content_violating_output_schema_is_a_clear_error(
    protocol: Protocol,
) -> None:
    tool = types.Tool(
        name="count",
        input_schema={"type": "object"},
        output_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    )
    bad = types.CallToolResult(content=[], structured_content={"n": "many"})
    source = MCPToolSource(
        "raw",
        MCPServerConfig(type="memory", protocol=protocol),
        server=build_raw_server(tools=[tool], result=bad),
    )
    try:
        with pytest.raises(ToolExecutionError, match=r"raw/count: Invalid structured content"):
            await source.call_tool("count", {})
        assert [spec.tool for spec in await source.list_tools()] == ["count"]
    finally:
        await source.aclose()


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_garbage_result_is_a_clear_error(protocol: Protocol) -> None:
    tool = types.Tool(name="junk", input_schema={"type": "object"})
    source = MCPToolSource(
        "raw",
        MCPServerConfig(type="memory", protocol=protocol),
        server=build_raw_server(tools=[tool], result={"content": "not a list", "isError": 3}),
    )
    try:
        with pytest.raises(ToolExecutionError, match=r"raw/junk: "):
            await source.call_tool("junk", {})
    finally:
        await source.aclose()


async def test_concurrent_calls_share_one_session() -> None:
    source = memory_source([])
    try:
        results = await asyncio.gather(
            *(source.call_tool("add", {"a": i, "b": 1}) for i in range(32))
        )
    finally:
        await source.aclose()
    assert [r["result"] for r in results] == [i + 1 for i in range(32)]


async def test_closed_source_refuses_calls() -> None:
    source = memory_source([])
    await source.connect()
    assert source.connected
    await source.aclose()
    assert not source.connected
    from paraagent_runtime.errors import MCPConnectionError

    with pytest.raises(MCPConnectionError, match="closed"):
        await source.call_tool("add", {"a": 1, "b": 2})


async def test_list_changed_refreshes_a_real_toolspace() -> None:
    from paraagent_runtime.toolspace import Toolspace

    refreshed = asyncio.Event()
    holder: list[Toolspace] = []

    async def refresh(_name: str) -> None:
        await holder[0].refresh()
        refreshed.set()

    toolspace = Toolspace([memory_source([], on_tools_changed=refresh)])
    holder.append(toolspace)
    try:
        await toolspace.refresh()
        assert "fresh" not in toolspace.tools
        assert await toolspace.call("grow", {}) == {"result": "grown"}
        await asyncio.wait_for(refreshed.wait(), 5)
        assert "fresh" in toolspace.tools
        assert [
            spec.name for spec in await toolspace.search("tool added at run time", top_k=1)
        ] == ["fresh"]
    finally:
        await toolspace.aclose()


@pytest.mark.parametrize(
    ("dispatcher_s", "server_s", "sdk_timeout"), [(5.0, 10.0, None), (20.0, 10.0, 10.0)]
)
async def test_a_dispatched_call_has_one_timer(
    dispatcher_s: float, server_s: float, sdk_timeout: float | None, monkeypatch: Any
) -> None:
    # The SDK's read timeout starts only when the server's own limit is the shorter one.
    source = memory_source([], timeout=server_s)
    toolspace = Toolspace([source])
    try:
        await toolspace.refresh()
        client = source._conn.client  # noqa: SLF001 - the SDK client the source calls
        seen: list[float | None] = []
        call_tool = client.call_tool

        async def spy(
            name: str, arguments: Any = None, read_timeout_seconds: Any = None, **kw: Any
        ):
            seen.append(read_timeout_seconds)
            return await call_tool(name, arguments, read_timeout_seconds, **kw)

        monkeypatch.setattr(client, "call_tool", spy)
        (result,) = await Dispatcher(DispatchConfig(call_timeout_s=dispatcher_s)).run_turn(
            [ToolCall(id="a", name="add", arguments={"a": 1, "b": 2})],
            await toolspace.new_session(),
        )
        assert result.ok and seen == [sdk_timeout]
        await source.call_tool("add", {"a": 1, "b": 2})  # outside a dispatcher: its own timer
        assert seen[-1] == server_s
    finally:
        await toolspace.aclose()

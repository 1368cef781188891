"""A Node MCP server (the reference ``server-everything``) over stdio, through paraagent.

``make test`` installs it into ``.venv/node`` when npm is available (the Makefile's node step);
without it these tests skip and say why. Nothing here reaches the network.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client

from paraagent_runtime.dispatch import DispatchConfig, Dispatcher
from paraagent_runtime.mcp import mcp_toolspace
from paraagent_runtime.mcp.serving import running_server
from paraagent_runtime.tools import ToolCall, ToolResult
from paraagent_runtime.toolspace import Toolspace

from .conftest import HERE

EVERYTHING = HERE.parents[2] / ".venv" / "node" / "node_modules" / ".bin" / "mcp-server-everything"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not EVERYTHING.exists(),
    reason=f"the Node MCP server is not installed ({EVERYTHING}; `make test` installs it "
    "when npm is available)",
)


@pytest.fixture
async def everything(tmp_path: Path) -> Toolspace:
    """A toolspace over ``server-everything`` from an MCP config, as a user would write it."""
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"everything": {"command": str(EVERYTHING), "args": ["stdio"]}}})
    )
    toolspace = mcp_toolspace(config)
    with anyio.fail_after(30):
        await toolspace.refresh()
    yield toolspace
    await toolspace.aclose()


async def test_node_server_tools_are_listed_under_their_own_names(everything: Toolspace) -> None:
    assert {"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} <= set(
        everything.tools
    )
    assert everything.unusable_tools == {}
    assert everything.tools["echo"].annotations.read_only
    # The spelling a model writes for a hyphenated name reaches the same tool.
    assert everything.resolve("get_sum") == everything.resolve("get-sum") == "get-sum"
    assert await everything.call("get_sum", {"a": 2, "b": 40}) == "The sum of 2 and 40 is 42."


async def test_a_parallel_turn_overlaps_on_the_node_server(everything: Toolspace) -> None:
    # Each call reports progress half way; every call is half way before any has finished.
    calls = [
        ToolCall(
            id=f"c{i}",
            name="trigger-long-running-operation",
            arguments={"duration": 2, "steps": 2},
        )
        for i in range(4)
    ]
    calls.append(ToolCall(id="echo", name="echo", arguments={"message": "hi"}))
    events: list[str] = []

    def on_progress(call: ToolCall, progress: float, total: float | None, _: str | None) -> None:
        if progress < (total or 0):
            events.append(f"half {call.id}")

    def on_finish(result: ToolResult) -> None:
        if result.call_id != "echo":
            events.append(f"done {result.call_id}")

    dispatcher = Dispatcher(DispatchConfig(dedup=False))
    session = await everything.new_session()
    session.load(call.name for call in calls)
    with anyio.fail_after(30):
        results = await dispatcher.run_turn(
            calls, session, on_progress=on_progress, on_finish=on_finish
        )
    assert [result.call_id for result in results] == [call.id for call in calls]
    assert all(result.ok for result in results), [result.error for result in results]
    assert "completed" in str(results[0].content).lower()
    assert results[-1].content == "Echo: hi"
    assert sorted(events[:4]) == [f"half c{i}" for i in range(4)], events


async def test_gateway_passes_the_node_servers_image_block_on(everything: Toolspace) -> None:
    async with running_server(everything) as server, Client(server) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("call_tool", {"name": "get-tiny-image"})
    assert not result.is_error
    images = [block for block in result.content if isinstance(block, types.ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert len(images[0].data) > 100
    assert all(
        not isinstance(block, types.TextContent) or "iVBOR" not in block.text
        for block in result.content
    )

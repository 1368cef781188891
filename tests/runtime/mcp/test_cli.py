"""``paraagent serve`` end to end: a real stdio child fronting a real stdio MCP server."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from paraagent_runtime.cli import main
from paraagent_runtime.mcp import MCPToolSource, mcp_toolspace

from .conftest import HERE, stdio_config

REPO = HERE.parents[2]


def demo_config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "demo": {
                        "command": stdio_config().command,
                        "args": [str(HERE / "demo_server.py")],
                    },
                    "off": {"command": "never-started", "enabled": False},
                }
            }
        )
    )
    return path


@pytest.mark.slow
async def test_serve_over_stdio_fronts_configured_servers(tmp_path: Path) -> None:
    front = serve_front(demo_config(tmp_path))
    try:
        assert {spec.tool for spec in await front.list_tools()} == {"search_tools", "call_tool"}
        value = await front.call_tool(
            "call_tool", {"name": "demo__echo", "arguments": {"text": "via gateway"}}
        )
    finally:
        await front.aclose()
    assert value == {"result": "via gateway"}


async def test_mcp_toolspace_lists_enabled_servers(tmp_path: Path) -> None:
    toolspace = mcp_toolspace(demo_config(tmp_path))
    try:
        await toolspace.refresh()
        assert {"echo", "add", "sleep"} <= set(toolspace.tools)
        assert all(spec.source == "demo" for spec in toolspace.tools.values())
        assert await toolspace.call("demo__add", {"a": 1, "b": 2}) == {"result": 3}
    finally:
        await toolspace.aclose()


def serve_front(config: Path, **kwargs: object) -> MCPToolSource:
    """A client of ``paraagent serve --mcp-config config`` run as a stdio child."""
    return MCPToolSource(
        "pa",
        stdio_config(
            "-c",
            "import sys; from paraagent_runtime.cli import main; "
            "sys.exit(main(['serve', *sys.argv[1:]]))",
            "--mcp-config",
            str(config),
            cwd=str(REPO),
            timeout=30,
        ),
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.slow
async def test_serve_answers_before_a_hanging_server_and_announces_tools(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    servers = json.loads(demo_config(tmp_path).read_text())["mcpServers"]
    servers["hang"] = {
        "command": stdio_config().command,
        "args": ["-c", "import sys; sys.stdin.read()"],
        "connectTimeout": 25,
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    changed = anyio.Event()
    front = serve_front(config, on_tools_changed=lambda _name: changed.set())
    try:
        with anyio.fail_after(20):
            await front.connect()  # the child's own start-up (Python, imports) counts apart
            started = time.perf_counter()
            listed = {spec.tool for spec in await front.list_tools()}
            elapsed = time.perf_counter() - started
            await changed.wait()
            value = await front.call_tool(
                "call_tool", {"name": "demo__echo", "arguments": {"text": "early"}}
            )
    finally:
        await front.aclose()
    assert listed == {"search_tools", "call_tool"}
    assert elapsed < 1.0
    assert value == {"result": "early"}


def test_public_bind_without_token_is_refused_before_any_work(tmp_path: Path, capsys) -> None:
    broken = tmp_path / "mcp.json"
    broken.write_text("{not json")
    argv = ["serve", "--mcp-config", str(broken), "--transport", "http", "--host", "0.0.0.0"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "binding 0.0.0.0 exposes your tools" in err and "mcp.json" not in err


def test_broken_config_is_one_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"time": {"args": []}}}')
    assert main(["serve", "--mcp-config", str(path)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "error: mcp.json: mcpServers.time.command: field required"
        " (or give a 'url' for an HTTP server)"
    )


def test_unknown_transport_is_refused(tmp_path: Path, capsys) -> None:
    argv = ["serve", "--mcp-config", str(demo_config(tmp_path)), "--transport", "ws"]
    assert main(argv) == 2
    assert "'ws' is not one of 'stdio', 'http'" in capsys.readouterr().err


@pytest.mark.slow
async def test_serve_reads_its_config_once(tmp_path: Path) -> None:
    # A config from a pipe (`--mcp-config <(make-config)`) can be read only once.
    (tmp_path / "src").mkdir()
    text = demo_config(tmp_path / "src").read_text()
    pipe = tmp_path / "mcp.json"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_text, args=(text,), daemon=True)
    writer.start()
    front = serve_front(pipe)
    try:
        with anyio.fail_after(30):
            value = await front.call_tool(
                "call_tool", {"name": "echo", "arguments": {"text": "piped"}}
            )
    finally:
        await front.aclose()
        if writer.is_alive():  # serve never opened the pipe: let the thread end
            pipe.read_text()
    assert value == {"result": "piped"}


@pytest.mark.slow
async def test_serve_announces_where_it_answers_and_what_is_ready(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    errors = tmp_path / "stderr.txt"
    child = serve_front(config).config
    assert child.command is not None
    server = StdioServerParameters(command=child.command, args=child.args, cwd=child.cwd)
    with errors.open("w") as errlog:
        async with Client(stdio_client(server, errlog=errlog), mode="legacy") as client:
            with anyio.fail_after(30):
                await client.call_tool("call_tool", {"name": "echo", "arguments": {"text": "x"}})
                while "sources ready" not in errors.read_text():
                    await anyio.sleep(0.05)
    lines = errors.read_text().splitlines()
    assert lines[:2] == [
        f"tools: the MCP servers of {config}",
        "serve: MCP over stdio; search_tools + call_tool; 1 tool source starting",
    ]
    assert re.fullmatch(r"serve: 1 of 1 tool sources ready, \d+ tools", lines[2]), lines

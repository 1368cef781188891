"""``paraagent serve`` end to end: a real stdio child fronting a real stdio MCP server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    config = demo_config(tmp_path)
    front = MCPToolSource(
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
    )
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

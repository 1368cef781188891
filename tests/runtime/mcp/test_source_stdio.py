"""MCPToolSource against real stdio child processes: our demo server and third-party servers."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from paraagent_runtime.errors import MCPConnectionError, ToolExecutionError
from paraagent_runtime.mcp import MCPTimeoutError, MCPToolSource, ReconnectPolicy

from .conftest import HERE, child_pids, pid_alive, stdio_config

DEMO = str(HERE / "demo_server.py")


async def test_mcp_server_time() -> None:
    source = MCPToolSource("time", stdio_config("-m", "mcp_server_time", "--local-timezone", "UTC"))
    try:
        specs = {spec.tool: spec for spec in await source.list_tools()}
        assert {"get_current_time", "convert_time"} <= set(specs)
        assert specs["get_current_time"].annotations.read_only
        assert not specs["get_current_time"].annotations.open_world
        now = await source.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
        assert now["timezone"] == "Asia/Tokyo" and now["datetime"].endswith("+09:00")
        converted = await source.call_tool(
            "convert_time",
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"},
        )
        assert converted["target"]["datetime"].endswith("17:30:00+05:30")
        with pytest.raises(ToolExecutionError, match="Invalid timezone"):
            await source.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
    finally:
        await source.aclose()


async def test_mcp_server_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "HOME": str(tmp_path),
        "PATH": os.environ["PATH"],
    }
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "notes.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "notes.txt"], check=True, env=env)
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", "first note"], check=True, env=env
    )
    (repo / "notes.txt").write_text("hello\nworld\n")
    source = MCPToolSource(
        "git",
        stdio_config(
            "-m",
            "mcp_server_git",
            "--repository",
            str(repo),
            allowedTools=["git_*"],
            excludedTools=["git_reset"],
        ),
    )
    try:
        names = {spec.tool for spec in await source.list_tools()}
        assert {"git_status", "git_log", "git_diff_unstaged"} <= names
        assert "git_reset" not in names
        status = await source.call_tool("git_status", {"repo_path": str(repo)})
        assert "notes.txt" in str(status)
        log = await source.call_tool("git_log", {"repo_path": str(repo)})
        assert "first note" in str(log)
        diff = await source.call_tool("git_diff_unstaged", {"repo_path": str(repo)})
        assert "+world" in str(diff)
    finally:
        await source.aclose()


async def test_child_gets_minimal_environment_plus_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARAAGENT_PARENT_SECRET", "leak")
    source = MCPToolSource("demo", stdio_config(DEMO, env={"DEMO_FLAG": "on"}))
    try:
        assert await source.call_tool("getenv", {"name": "DEMO_FLAG"}) == {"result": "on"}
        assert await source.call_tool("getenv", {"name": "PARAAGENT_PARENT_SECRET"}) == {
            "result": ""
        }
    finally:
        await source.aclose()


async def test_killed_server_fails_calls_then_reconnects() -> None:
    source = MCPToolSource("demo", stdio_config(DEMO))
    other = MCPToolSource("time", stdio_config("-m", "mcp_server_time", "--local-timezone", "UTC"))
    try:
        first_pid = (await source.call_tool("pid", {}))["result"]
        assert source.connection_state().status == "connected"
        await other.connect()
        in_flight = asyncio.create_task(source.call_tool("sleep", {"seconds": 30}))
        await asyncio.sleep(0.2)
        os.kill(first_pid, signal.SIGKILL)
        with pytest.raises(MCPConnectionError, match="'demo' closed the connection"):
            await asyncio.wait_for(in_flight, 10)
        # A dead session is not a failed attempt: the next use reconnects at once.
        assert source.connection_state().status == "disconnected"
        # The other server is untouched.
        assert (await other.call_tool("get_current_time", {"timezone": "UTC"}))["timezone"] == "UTC"
        second_pid = (await source.call_tool("pid", {}))["result"]
        assert second_pid != first_pid
        assert await source.call_tool("add", {"a": 2, "b": 2}) == {"result": 4}
    finally:
        await source.aclose()
        await other.aclose()


async def test_unstartable_server_backs_off() -> None:
    source = MCPToolSource(
        "ghost",
        stdio_config("-c", "import sys; sys.exit(3)", timeout=5),
        reconnect=ReconnectPolicy(initial_backoff_s=30),
    )
    try:
        assert source.connection_state().status == "disconnected"
        with pytest.raises(MCPConnectionError, match="'ghost': cannot connect"):
            await source.list_tools()
        state = source.connection_state()
        assert state.status == "reconnecting" and state.error
        assert 0 < state.retry_in_s <= 30
        with pytest.raises(
            MCPConnectionError, match=r"unavailable .*next reconnection attempt in \d"
        ):
            await source.call_tool("anything", {})
    finally:
        await source.aclose()
    assert source.connection_state().status == "closed"


async def test_closing_during_the_handshake_leaves_no_child() -> None:
    slow_start = f"import runpy, time; time.sleep(1); runpy.run_path({DEMO!r}, run_name='__main__')"
    source = MCPToolSource("slow", stdio_config("-c", slow_start, timeout=10))
    connecting = asyncio.create_task(source.connect())
    await asyncio.sleep(0.3)
    await source.aclose()
    with pytest.raises(MCPConnectionError, match="source is closed"):
        await asyncio.wait_for(connecting, 15)
    assert source.connection_state().status == "closed"
    assert child_pids() == []


async def test_missing_command_is_a_connection_error() -> None:
    source = MCPToolSource(
        "nope", stdio_config(timeout=5).model_copy(update={"command": "/nonexistent/mcp-bin"})
    )
    with pytest.raises(MCPConnectionError, match="'nope': cannot connect"):
        await source.connect()
    await source.aclose()


async def test_hung_tool_times_out_and_server_sees_cancellation(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    source = MCPToolSource(
        "demo", stdio_config(DEMO, env={"DEMO_MARKER": str(marker)}, timeout=1.0)
    )
    try:
        await source.connect()
        with pytest.raises(MCPTimeoutError, match=r"demo/sleep: no result within 1s"):
            await source.call_tool("sleep", {"seconds": 60})
        for _ in range(200):
            if marker.exists():
                break
            await asyncio.sleep(0.02)
        assert marker.read_text() == "cancelled\n"
        assert await source.call_tool("echo", {"text": "still here"}) == {"result": "still here"}
    finally:
        await source.aclose()


async def test_schema_invalid_and_garbage_results_are_clear_errors() -> None:
    source = MCPToolSource("raw", stdio_config(str(HERE / "garbage_server.py"), timeout=5))
    try:
        assert [spec.tool for spec in await source.list_tools()] == ["junk", "count"]
        with pytest.raises(
            ToolExecutionError,
            match=r"raw/junk: the server returned a malformed result \(content: ",
        ):
            await source.call_tool("junk", {})
        with pytest.raises(
            ToolExecutionError, match=r"raw/count: Invalid structured content .*'many'"
        ):
            await source.call_tool("count", {})
        assert source.connected
    finally:
        await source.aclose()


async def test_aclose_terminates_the_child() -> None:
    source = MCPToolSource("demo", stdio_config(DEMO))
    pid = (await source.call_tool("pid", {}))["result"]
    assert pid in child_pids() and pid_alive(pid)
    await source.aclose()
    for _ in range(100):
        if not pid_alive(pid):
            break
        await asyncio.sleep(0.05)
    assert not pid_alive(pid)


def test_demo_server_runs_standalone() -> None:
    completed = subprocess.run([sys.executable, DEMO], input="", capture_output=True, timeout=30)
    assert completed.returncode == 0

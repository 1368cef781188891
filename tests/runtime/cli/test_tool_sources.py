"""Tool sources are chosen, never mixed in: `run` over real MCP servers, ./.mcp.json or ToolEnv."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# Imported at collection: the SDK binds stdio children's stderr to sys.stderr as it is then, and
# a test's captured stream is closed after that test.
import paraagent_runtime.mcp.source  # noqa: F401
from paraagent_runtime.cli import main
from paraagent_runtime.cli.tool_sources import choose_tools
from paraagent_runtime.errors import UserError
from paraagent_runtime.keyword_search import KeywordToolSearch
from paraagent_runtime.trajectory import Episode, read_episodes

TIME_SERVER = Path(sys.executable).with_name("mcp-server-time")


@pytest.fixture(autouse=True)
def keyword_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword search instead of embedding each test's new tool space (seconds per test)."""
    monkeypatch.setattr(
        "paraagent_runtime.cli.run_command.default_tool_search", lambda _scope: KeywordToolSearch()
    )


def time_config(tmp_path: Path, name: str = "time", **extra: object) -> Path:
    """An MCP config with the real ``mcp-server-time`` under ``name``."""
    server = {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"], **extra}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {name: server}}))
    return path


def script(tmp_path: Path, *turns: str) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(turn) + "\n" for turn in turns), encoding="utf-8")
    return f"scripted:{path}"


def call(name: str, **arguments: object) -> str:
    payload = json.dumps({"name": name, "arguments": arguments})
    return f"<phase>execute</phase><tool_call>{payload}</tool_call>"


def inspect(*names: str) -> str:
    calls = "".join(
        f'<tool_call>{{"name": "inspect_tool", "arguments": {{"name": "{name}"}}}}</tool_call>'
        for name in names
    )
    return f"<phase>explore</phase>{calls}"


TIME_TOOLS = {"get_current_time", "convert_time"}


def preloaded(episode: Episode) -> set[str]:
    """The tools the system prompt lists as loaded (a ``time__`` prefix, if any, dropped)."""
    return {
        json.loads(line)["name"].removeprefix("time__")
        for line in episode.messages[0].content.splitlines()
        if line.startswith('{"name"')
    }


def run(tmp_path: Path, *argv: str) -> tuple[int, Episode | None]:
    out = tmp_path / "t.jsonl"
    code = main(["run", *argv, "-o", str(out)])
    return code, next(iter(read_episodes(out)), None) if out.exists() else None


def test_a_server_named_time_is_the_only_tool_source(tmp_path: Path, capfd) -> None:
    policy = script(tmp_path, call("time__get_current_time", timezone="Europe/Paris"), "<answer>ok")
    code, episode = run(tmp_path, "time?", "--mcp-config", str(time_config(tmp_path)), "-p", policy)
    err = capfd.readouterr().err
    assert code == 0, err
    assert f"tools: the MCP servers of {tmp_path / 'mcp.json'}\n" in err
    assert episode is not None and episode.status == "answered"
    assert preloaded(episode) == TIME_TOOLS
    (result,) = episode.turns[0].results
    assert result.ok and "Europe/Paris" in json.dumps(result.model_dump())


def test_toolenv_joins_only_when_asked(tmp_path: Path, capfd) -> None:
    config = time_config(tmp_path, name="clock")
    policy = script(
        tmp_path, inspect("clock__get_current_time", "weather__get_forecast"), "<answer>"
    )
    code, episode = run(tmp_path, "x", "--mcp-config", str(config), "--toolenv", "-p", policy)
    assert code == 0
    assert "+ the built-in ToolEnv (simulated)" in capfd.readouterr().err
    assert episode is not None and [r.ok for r in episode.turns[0].results] == [True, True]


def test_toolenv_and_a_server_with_a_provider_name_is_an_error_naming_both(
    tmp_path: Path, capfd
) -> None:
    config = time_config(tmp_path)
    code, episode = run(tmp_path, "x", "--mcp-config", str(config), "--toolenv", "-p", "scripted:x")
    assert code == 2 and episode is None
    err = capfd.readouterr().err
    assert "server 'time' and the built-in ToolEnv provider 'time' have one name" in err


def test_a_project_mcp_json_is_found_and_said(
    tmp_path: Path, capfd, monkeypatch: pytest.MonkeyPatch
) -> None:
    time_config(tmp_path).rename(tmp_path / ".mcp.json")
    monkeypatch.chdir(tmp_path)
    code, episode = run(tmp_path, "x", "-p", script(tmp_path, "<answer>ok</answer>"))
    assert code == 0
    assert "tools: the MCP servers of .mcp.json (found ./.mcp.json" in capfd.readouterr().err
    assert episode is not None and preloaded(episode) == TIME_TOOLS


def test_without_any_config_the_builtin_toolenv_is_used_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert choose_tools(None, None).toolenv
    assert choose_tools(None, None).describe().startswith("tools: the built-in ToolEnv")
    with pytest.raises(UserError, match="no tools: --no-toolenv"):
        choose_tools(None, False)


@pytest.mark.parametrize(
    ("key", "value", "hint"),
    [("excludedTool", ["convert_time"], "'excludedTools'"), ("arg", ["--x"], "'args'")],
)
def test_a_misspelled_key_stops_the_run(tmp_path: Path, capfd, key, value, hint) -> None:
    config = time_config(tmp_path, **{key: value})
    code, episode = run(tmp_path, "x", "--mcp-config", str(config), "-p", "scripted:x")
    assert code == 2 and episode is None
    assert capfd.readouterr().err.strip() == (
        f"error: mcp.json: mcpServers.time.{key}: unknown key (did you mean {hint}?)"
    )

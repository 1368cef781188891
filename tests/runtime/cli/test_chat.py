"""``paraagent chat`` option handling (the app itself is tested through the pilot)."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from paraagent_runtime.cli.chat_command import chat_command
from paraagent_runtime.errors import ConfigError, UserError


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(chat_command)
    return app


def test_bad_mode_is_a_usage_error():
    result = CliRunner().invoke(_app(), ["--mode", "turbo"])
    assert result.exit_code == 2 and "'turbo' is not one of" in result.output


def test_the_model_flag_is_gone_use_a_policy_spec():
    result = CliRunner().invoke(_app(), ["--model", "m"])
    assert result.exit_code == 2 and "No such option: --model" in result.output


def test_no_tools_at_all_is_a_user_error():
    result = CliRunner().invoke(_app(), ["--no-toolenv"])
    assert isinstance(result.exception, UserError)


def test_a_missing_script_is_a_config_error(tmp_path):
    result = CliRunner().invoke(_app(), ["--policy", f"scripted:{tmp_path}/missing.jsonl"])
    assert isinstance(result.exception, ConfigError)


def _project_config(tmp_path, monkeypatch, name: str) -> None:
    server = {"command": "mcp-server-time"}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {name: server}}))
    monkeypatch.chdir(tmp_path)


def test_a_project_mcp_json_is_the_tools_and_is_said(tmp_path, monkeypatch):
    _project_config(tmp_path, monkeypatch, "time")
    result = CliRunner().invoke(_app(), ["--policy", f"scripted:{tmp_path}/missing.jsonl"])
    assert isinstance(result.exception, ConfigError)  # the policy, after the tools were chosen
    assert "tools: the MCP servers of .mcp.json (found ./.mcp.json" in result.output


def test_toolenv_beside_a_server_with_a_provider_name_is_an_error_naming_both(
    tmp_path, monkeypatch
):
    _project_config(tmp_path, monkeypatch, "time")
    result = CliRunner().invoke(_app(), ["--toolenv"])
    assert isinstance(result.exception, ConfigError)
    assert "server 'time' and the built-in ToolEnv provider 'time'" in str(result.exception)

"""``paraagent chat`` option handling (the app itself is tested through the pilot)."""

from __future__ import annotations

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

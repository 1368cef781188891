"""``paraagent chat`` option handling (the app itself is tested through the pilot)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from paraagent_runtime.errors import ConfigError, UserError
from tui.cli import chat_command, policy_spec


@pytest.mark.parametrize(
    ("policy", "model", "base_url", "expected"),
    [
        (None, None, None, "paraagent"),
        ("scripted:x.jsonl", "m", "http://h/v1", "scripted:x.jsonl"),
        (None, "Qwen/Qwen3-4B", "http://h/v1", "openai:Qwen/Qwen3-4B"),
        (None, "/models/tiny", None, "local:/models/tiny"),
        (None, "vllm:Qwen/Qwen3-4B", None, "vllm:Qwen/Qwen3-4B"),
    ],
)
def test_policy_spec(policy, model, base_url, expected):
    assert policy_spec(policy=policy, model=model, base_url=base_url) == expected


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(chat_command)
    return app


def test_bad_mode_is_a_usage_error():
    result = CliRunner().invoke(_app(), ["--mode", "turbo"])
    assert result.exit_code == 2 and "unknown mode" in result.output


def test_no_tools_at_all_is_a_user_error():
    result = CliRunner().invoke(_app(), ["--no-toolenv"])
    assert isinstance(result.exception, UserError)


def test_a_missing_script_is_a_config_error(tmp_path):
    result = CliRunner().invoke(_app(), ["--policy", f"scripted:{tmp_path}/missing.jsonl"])
    assert isinstance(result.exception, ConfigError)

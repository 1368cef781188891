"""The dispatch-limit flags of ``run``, ``chat``, ``serve`` and ``eval toolenv``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from paraagent_runtime.cli import main, options
from paraagent_runtime.dispatch import DispatchConfig
from paraagent_runtime.trajectory import read_episodes

NAMES_SERVER = Path(__file__).parents[1] / "mcp" / "names_server.py"
FLAGS = ("--max-calls-per-turn", "--max-concurrency", "--per-source-concurrency", "--call-timeout")


def test_run_with_max_calls_per_turn_64_gives_64_results(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"names": {"command": sys.executable, "args": [str(NAMES_SERVER)]}}}
        ),
        encoding="utf-8",
    )
    calls = "".join(
        f'<tool_call>{{"name": "get-tiny-image", "arguments": {{"i": {i}}}}}</tool_call>'
        for i in range(64)
    )
    inspect = (
        '<tool_call>{"name": "inspect_tool", "arguments": {"name": "get-tiny-image"}}</tool_call>'
    )
    turns = [
        f"<phase>explore</phase>{inspect}",
        f"<phase>execute</phase>{calls}",
        "<answer>ok</answer>",
    ]
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(turn) + "\n" for turn in turns), encoding="utf-8")
    out = tmp_path / "t.jsonl"
    argv = ["run", "hi", "--policy", f"scripted:{script}", "--mcp-config", str(config)]
    assert main([*argv, "--max-calls-per-turn", "64", "-o", str(out)]) == 0
    (episode,) = read_episodes(out)
    results = episode.turns[1].results
    assert len(results) == 64 and [result.error for result in results] == [None] * 64


def test_the_flags_set_the_limits_and_only_the_limits_given() -> None:
    assert options.dispatch_limits() == DispatchConfig()
    assert options.dispatch_limits(64) == DispatchConfig(
        max_calls_per_turn=64, max_concurrency=64, per_source_concurrency=64
    )
    assert options.dispatch_limits(64, 32, 4, 2.5) == DispatchConfig(
        max_calls_per_turn=64, max_concurrency=32, per_source_concurrency=4, call_timeout_s=2.5
    )


def test_the_help_names_the_library_defaults() -> None:
    default = DispatchConfig()
    assert f"[default: {default.max_calls_per_turn}]" in options.max_calls_per_turn().help
    assert f"[default: {default.max_concurrency}]" in options.max_concurrency().help
    assert f"[default: {default.per_source_concurrency}]" in options.per_source_concurrency().help
    assert f"[default: {default.call_timeout_s:g}]" in options.call_timeout().help


@pytest.mark.parametrize("command", [["run"], ["chat"], ["serve"], ["eval", "toolenv"]])
def test_every_agent_command_takes_the_flags(command: list[str], capsys) -> None:
    assert main([*command, "--help"]) == 0
    printed = capsys.readouterr().out
    assert all(flag in printed for flag in FLAGS)

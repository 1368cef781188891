"""``paraagent run`` end to end, and the CLI's one-line errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from paraagent_runtime.cli import main
from paraagent_runtime.trajectory import read_episodes

from .helpers import PARAAGENT

DEMO_SERVER = Path(__file__).parents[1] / "mcp" / "demo_server.py"


def script(tmp_path: Path, turns: list[str]) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(turn) + "\n" for turn in turns), encoding="utf-8")
    return f"scripted:{path}"


def test_run_builtin_tasks_prints_trace_checks_answers_and_writes_trajectories(
    tmp_path, capsys
) -> None:
    explore = (
        "<phase>explore</phase>"
        '<tool_call>{"name": "search_tools", '
        '"arguments": {"query": "current weather in a city"}}</tool_call>'
    )
    policy = script(
        tmp_path, [explore, "<answer>no idea</answer>", "<answer>still no idea</answer>"]
    )
    out = tmp_path / "t.jsonl"
    code = main(["run", "--builtin-tasks", "2", "--policy", policy, "-o", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "explore × 1: search_tools" in printed
    assert "✗ failed" in printed and "summary" in printed and "0/2" in printed
    episodes = list(read_episodes(out))
    assert [e.task_id for e in episodes] == [
        "builtin-0-00000-multi_city_weather",
        "builtin-0-00001-flight_arrival_weather",
    ]
    assert episodes[0].turns[0].results[0].ok and episodes[0].metadata["success"] is False


def test_model_server_down_ends_the_episode_cleanly_and_exits_1(tmp_path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    code = main(
        [
            "run",
            "hello",
            "--policy",
            "openai:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "-o",
            str(out),
        ]
    )
    assert code == 1
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(f"error: 1 of 1 episodes ended in an error (see {out})")
    )
    (episode,) = read_episodes(out)
    assert episode.status == "error" and "cannot reach the model server" in (episode.error or "")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run"], "nothing to run"),
        (["run", "--tasks", "/nonexistent/tasks.jsonl"], "--tasks /nonexistent/tasks.jsonl"),
        (["run", "x", "--policy", "gpt:4"], "gpt:4"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(argv: list[str], message: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.strip().startswith("error:")


def test_an_unknown_mode_is_a_usage_error(capsys) -> None:
    assert main(["run", "x", "--mode", "parallel"]) == 2
    err = capsys.readouterr().err
    assert "'parallel' is not one of 'paraact', 'react', 'decoupled'" in err
    assert "Traceback" not in err


def test_broken_tasks_file_names_the_line(tmp_path, capsys) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"query": "ok"}\n{broken\n', encoding="utf-8")
    assert main(["run", "--tasks", str(tasks)]) == 2
    assert f"{tasks}:2" in capsys.readouterr().err


def test_every_command_has_help(capsys) -> None:
    for argv in (
        ["--help"],
        ["run", "--help"],
        ["serve-model", "--help"],
        ["eval", "toolenv", "--help"],
        ["train", "--help"],
    ):
        assert main(argv) == 0
    assert "Usage" in capsys.readouterr().out


@pytest.mark.slow
def test_ctrl_c_keeps_the_running_episode_as_interrupted(tmp_path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"demo": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}}
        )
    )
    hang = '<phase>execute</phase><tool_call>{"name": "demo__sleep", "arguments": {"seconds": 60}}'
    policy = script(tmp_path, [hang + "</tool_call>", "<answer>never</answer>"])
    out = tmp_path / "t.jsonl"
    argv = [
        str(PARAAGENT),
        "run",
        "wait",
        "--mcp-config",
        str(config),
        "-p",
        policy,
        "-o",
        str(out),
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None
        for line in child.stdout:  # the call is in flight once its phase line is printed
            if "execute × 1" in line:
                break
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
    finally:
        child.kill()  # only if it did not stop on its own
    assert child.returncode == 130, err
    assert err.strip().splitlines()[-1] == (
        f"interrupted: task 1/1 kept in {out} with status 'interrupted'; 0 of 1 finished"
    )
    (episode,) = read_episodes(out)
    assert episode.status == "interrupted" and episode.task == "wait"
    assert [call.name for call in episode.turns[0].calls] == ["demo__sleep"]

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
from paraagent_runtime.cli.output import DEMO_MODEL_NOTICE
from paraagent_runtime.trajectory import read_episodes

from .helpers import PARAAGENT, default_sigint, run_cli

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
    printed = capsys.readouterr()
    last = printed.err.strip().splitlines()[-1]
    assert last.startswith("error: 1 of 1 episodes ended in an error; the first: cannot reach")
    assert last.endswith(f"(see {out})")
    # The cause is in the turn it happened and in the episode's last line, not only in the file.
    assert "✗ turn 0 failed: cannot reach the model server" in printed.out
    assert "failed: cannot reach the model server" in printed.out.split("summary")[0]
    assert "answer (error)" not in printed.out
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
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_sigint,
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


def test_format_errors_and_typed_tool_errors_show_in_their_turn(tmp_path, capsys) -> None:
    turns = [
        '<phase>wander</phase><tool_call>{"name": "search_tools", "arguments": {bad}</tool_call>',
        '<phase>execute</phase><tool_call>{"name": "nosuch_tool", "arguments": {}}</tool_call>',
        "<answer>done</answer>",
    ]
    assert main(["run", "hi", "-p", script(tmp_path, turns), "-o", str(tmp_path / "t.jsonl")]) == 0
    printed = capsys.readouterr().out
    live = printed.split("hi\n", 1)[1].split("┏", 1)[0]  # the live trace, before the table
    turn0, turn1 = live.split("turn 1: thinking…")
    assert '⚠ format error [unknown_phase]: unknown phase "wander"' in turn0
    assert "⚠ format error [malformed_json]: tool call #1 is not valid JSON" in turn0
    assert "execute × 1: nosuch_tool" in turn1
    assert "✗ nosuch_tool [unknown_tool] — unknown tool 'nosuch_tool'" in turn1
    table = printed.split("┏", 1)[1]
    assert "[unknown_phase]" in table and "[unknown_tool]" in table


def test_react_mode_prints_calls_not_a_none_phase(tmp_path, capsys) -> None:
    turns = [
        '<tool_call>{"name": "search_tools", "arguments": {"query": "weather"}}</tool_call>',
        "<answer>ok</answer>",
    ]
    argv = [
        "run",
        "hi",
        "-m",
        "react",
        "-p",
        script(tmp_path, turns),
        "-o",
        str(tmp_path / "t.jsonl"),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "call × 1: search_tools" in printed
    assert "None" not in printed
    assert "│ call " in printed


def test_an_unloadable_model_prints_its_cause_and_exits_1(tmp_path) -> None:
    out = tmp_path / "t.jsonl"
    result = run_cli("run", "hi", "-p", f"local:{tmp_path / 'missing'}", "-o", str(out))
    assert result.returncode == 1
    assert "✗ turn 0 failed: cannot load the model" in result.stdout
    assert "the first: cannot load the model" in result.stderr
    # The third-party loading bars are off without -v.
    assert "Loading weights" not in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_an_unwritable_out_is_one_error_before_any_work(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run_cli("run", "hi", "-p", "scripted:x.jsonl", "-o", str(blocker / "t.jsonl"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: --out {blocker / 't.jsonl'}: cannot create {blocker} (File exists)"
    ]
    assert result.stdout == ""


def test_the_demo_default_is_announced_once(tmp_path) -> None:
    env = {"PARAAGENT_CACHE": str(tmp_path / "cache")}
    # No tools, so the command stops right after the notice, before any model loads.
    argv = ["run", "hi", "--no-toolenv", "-o", str(tmp_path / "t.jsonl")]
    first, second = run_cli(*argv, env=env), run_cli(*argv, env=env)
    assert first.returncode == second.returncode == 2
    assert first.stderr.splitlines()[0] == DEMO_MODEL_NOTICE
    assert "--policy openai:MODEL --base-url" in DEMO_MODEL_NOTICE
    assert DEMO_MODEL_NOTICE not in second.stderr
    explicit = run_cli(*argv, "-p", "scripted:x.jsonl", env={"PARAAGENT_CACHE": str(tmp_path)})
    assert DEMO_MODEL_NOTICE not in explicit.stderr


def test_a_terminal_sees_a_live_turn_status(tmp_path) -> None:
    import pty
    import select

    from rich.text import Text

    policy = script(tmp_path, ["<answer>ok</answer>"])
    primary, secondary = pty.openpty()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "80", "LINES": "24", "TERM": "xterm"}
    argv = [str(PARAAGENT), "run", "hi", "-p", policy, "-o", str(tmp_path / "t.jsonl")]
    child = subprocess.Popen(argv, stdin=secondary, stdout=secondary, stderr=secondary, env=env)
    os.close(secondary)
    received = b""
    try:
        while select.select([primary], [], [], 60)[0]:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            received += chunk
        assert child.wait(timeout=30) == 0
    finally:
        child.kill()  # only if it did not stop on its own
        os.close(primary)
    shown = Text.from_ansi(received.decode("utf-8", "replace").replace("\r", "")).plain
    assert "turn 0 · thinking · " in shown  # the status line, with its spinner
    assert "turn 0: thinking…" not in shown
    assert "answer (answered): ok" in shown


def test_an_episode_out_of_turns_says_it_has_no_answer(tmp_path, capsys) -> None:
    call = '{"name": "search_tools", "arguments": {"query": "x"}}'
    policy = script(tmp_path, [f"<phase>explore</phase><tool_call>{call}</tool_call>"])
    argv = ["run", "hi", "--max-turns", "1", "-p", policy, "-o", str(tmp_path / "t.jsonl")]
    assert main(argv) == 0
    assert "no answer within 1 turns (--max-turns)" in capsys.readouterr().out


def test_an_episode_repeating_itself_is_stopped_and_says_why(tmp_path, capsys) -> None:
    call = '{"name": "search_tools", "arguments": {"query": "x"}}'
    policy = script(tmp_path, [f"<phase>explore</phase><tool_call>{call}</tool_call>"] * 3)
    out = tmp_path / "t.jsonl"
    argv = ["run", "hi", "--max-repeated-turns", "2", "-p", policy, "-o", str(out)]
    assert main(argv) == 0
    assert "stopped at turn 2, which repeated the turns before it" in capsys.readouterr().out
    (episode,) = read_episodes(out)
    assert episode.status == "repeating" and len(episode.turns) == 2


@pytest.mark.slow
def test_a_new_tool_index_is_announced_once(tmp_path) -> None:
    env = {"PARAAGENT_INDEX_DIR": str(tmp_path / "index")}
    policy = script(tmp_path, ["<answer>ok</answer>"])
    argv = ["run", "hi", "-p", policy, "-o", str(tmp_path / "t.jsonl")]
    first, second = run_cli(*argv, env=env), run_cli(*argv, env=env)
    assert first.returncode == second.returncode == 0, first.stderr
    notice = f"notice: first use of these tools: embedding them into a new tool index at {tmp_path}"
    assert notice in first.stderr
    assert "notice: first use" not in second.stderr


def test_prefetch_tools_loads_what_the_task_text_finds_before_the_first_turn(tmp_path) -> None:
    policy = script(tmp_path, ["<answer>not sure</answer>"])
    out = tmp_path / "t.jsonl"
    argv = ["run", "--builtin-tasks", "1", "--prefetch-tools", "3", "-p", policy, "-o", str(out)]
    assert main(argv) == 0
    (episode,) = read_episodes(out)
    assert len(episode.prefetched_tools) == 3
    assert any("weather" in name for name in episode.prefetched_tools), episode.prefetched_tools

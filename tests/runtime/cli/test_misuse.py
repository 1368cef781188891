"""Misuse of the installed ``paraagent``: one short ``error:`` line, exit 2, never a traceback."""

from __future__ import annotations

import pytest

from .helpers import run_cli

MISUSE = [
    ["--bogus"],
    ["nosuch"],
    ["run", "--bogus"],
    ["run", "--max-turns", "abc", "x"],
    ["run", "--max-tokens", "0", "x"],
    ["run", "--temperature", "-1", "x"],
    ["run", "x", "--mode", "parallel"],
    ["serve", "--no-toolenv"],
    ["serve", "--mcp-config", "mcp.json", "--transport", "bogus"],
    ["serve", "--mcp-config", "mcp.json", "--port", "0"],
    ["serve-model", "--port", "x"],
    ["serve-model", "--port", "-5"],
    ["serve-model", "--model", "paraagent"],
    ["chat", "--bogus"],
    ["chat", "--mode", "turbo"],
    ["eval", "nosuch"],
    ["eval", "toolenv", "--n-tasks", "0"],
    ["eval", "toolenv", "--n", "3"],
    ["eval", "retrieval", "--bogus"],
    ["index", "nosuch"],
    ["index", "search"],
    ["index", "search", "x", "--retriever", "fuzzy"],
    ["index", "build", "--bogus"],
    ["toolenv", "nosuch"],
    ["toolenv", "stats", "--bogus"],
    ["toolenv", "catalog", "build", "--output", "x"],
    ["toolenv", "serve", "--transport", "bogus"],
    ["train", "nosuch"],
    ["train", "demos", "--n-tasks", "0"],
    ["train", "sft", "--bogus"],
    ["train", "eval", "--mode", "serial"],
    ["train", "eval", "--adapter", "x"],
    ["train", "rl", "--bogus"],
    ["train", "rl", "ablation", "--seed", "x"],
    ["train", "rl", "probe"],
    ["train", "rl", "pool"],
    # Every numeric option has its range and every enumerated one its choices (issue 25 item 8).
    ["run", "x", "--builtin-tasks", "-2"],
    ["run", "x", "--seed", "-1"],
    ["run", "x", "--max-turns", "0"],
    ["run", "x", "--max-repeated-turns", "1"],
    ["run", "x", "--max-repeated-turns", "-1"],
    ["eval", "toolenv", "--max-repeated-turns", "1"],
    ["train", "eval", "--max-repeated-turns", "1"],
    ["run", "x", "--call-timeout", "0"],
    ["run", "x", "--max-calls-per-turn", "0"],
    ["serve-model", "--port", "70000"],
    ["index", "search", "x", "-k", "0"],
    ["toolenv", "serve", "--port", "-5"],
    ["toolenv", "serve", "--page-size", "0"],
    ["train", "sft", "--max-steps", "0"],
    ["train", "eval", "--dtype", "bogus"],
    ["train", "eval", "--samples", "0"],
    ["train", "rl", "--steps", "0"],
    ["train", "rl", "--estimator", "bogus"],
    ["train", "rl", "ablation", "--window", "0"],
    ["train", "rl", "ablation", "--heldout-temperature", "-1"],
    ["train", "rl", "ablation", "--seed", "-1"],
    ["eval", "toolenv", "--split", "bogus"],
    ["eval", "toolenv", "--catalog", "bogus"],
    ["eval", "toolenv", "--family", "nosuch"],
    ["eval", "toolenv", "--split", "dev", "--family", "meeting_followup"],
    ["eval", "toolenv", "--prefetch-tools", "-1"],
    ["run", "x", "--prefetch-tools", "-1"],
    ["chat", "--prefetch-tools", "-1"],
]


@pytest.mark.parametrize("argv", MISUSE, ids=" ".join)
def test_misuse_is_one_short_error_and_exit_2(argv: list[str]) -> None:
    result = run_cli(*argv)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 3, result.stderr
    assert lines[0].startswith("error: ")
    assert result.stdout == ""


def test_a_bad_constrained_decoding_switch_is_one_error_line(tmp_path) -> None:
    # A cache that has shown the one-time default-model notice, so stderr holds the error alone.
    (tmp_path / "notices").mkdir()
    (tmp_path / "notices" / "default-model").touch()
    env = {"PARAAGENT_CONSTRAINED_DECODING": "maybe", "PARAAGENT_CACHE": str(tmp_path)}
    result = run_cli("run", "-p", "paraagent", "x", env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        "error: PARAAGENT_CONSTRAINED_DECODING='maybe': use 1/on/true or 0/off/false"
    )


def test_a_usage_error_names_the_help_of_its_command() -> None:
    result = run_cli("train", "rl", "ablation", "--seed", "x")
    assert result.stderr.strip() == (
        "error: Invalid value for '--seed': Input should be a valid integer, unable to parse "
        "string as an integer (see 'paraagent train rl ablation --help')"
    )


def test_a_typo_suggests_the_lazy_command() -> None:
    assert "Did you mean 'serve'" in run_cli("serv").stderr


@pytest.mark.parametrize("argv", [[], ["eval"], ["index"], ["toolenv"], ["train"]], ids=repr)
def test_a_group_alone_shows_its_help(argv: list[str]) -> None:
    result = run_cli(*argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Usage: {' '.join(['paraagent', *argv])} [OPTIONS] COMMAND")
    assert result.stderr == ""


def test_every_command_is_listed_with_its_help() -> None:
    listed = run_cli("--help").stdout
    for name in ("run", "chat", "serve", "serve-model", "eval", "toolenv", "index", "train"):
        assert f"\n  {name} " in listed


def test_version() -> None:
    from importlib.metadata import version

    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout == f"paraagent {version('paraagent')}\n"


def test_log_levels_are_documented_in_help() -> None:
    listed = run_cli("--help").stdout
    assert "-v, --verbose" in listed and "-vv, --debug" in listed

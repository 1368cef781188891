"""The ToolEnv eval: the oracle solves every task in each mode, metrics, report files, CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mcp_servers.toolenv import builtin_tasks, generate_tasks
from mcp_servers.toolenv.evaluation import (
    EvalConfig,
    evaluate_toolenv,
    markdown_table,
    parse_modes,
    write_report,
)
from mcp_servers.toolenv.oracle import OracleScript, oracle_policy
from paraagent_runtime.cli.eval_toolenv import eval_toolenv_command
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.trajectory import read_episodes


@pytest.fixture(scope="module")
def oracle_report():  # noqa: ANN201 - fixture
    config = EvalConfig(policy="oracle", modes=["all"], split="test-seen", llm_turn_s=1.0)
    return asyncio.run(evaluate_toolenv(config, oracle_policy, tasks=builtin_tasks()))


def test_oracle_solves_every_builtin_task_in_every_mode(oracle_report) -> None:  # noqa: ANN001
    by_mode = {summary.mode: summary for summary in oracle_report.summaries}
    assert set(by_mode) == {"paraact", "react", "decoupled"}
    assert all(
        summary.success_rate == 1.0 and summary.recall == 1.0 for summary in by_mode.values()
    )
    assert len(oracle_report.episodes) == 3 * len(builtin_tasks())


def test_paraact_reaches_the_gold_depth_and_beats_react(oracle_report) -> None:  # noqa: ANN001
    rows = {(row.mode, row.task_id): row for row in oracle_report.episodes}
    for task in builtin_tasks():
        para, react = rows["paraact", task.id], rows["react", task.id]
        assert para.execute_turns == task.depth
        assert para.turns == task.depth + 2  # one explore turn, one turn per level, the answer
        assert react.execute_turns == len(task.calls) and react.calls_per_execute_turn == 1.0
        assert para.turns <= react.turns and para.sim_wall_s <= react.sim_wall_s
    summaries = {summary.mode: summary for summary in oracle_report.summaries}
    assert summaries["paraact"].mean_turns < summaries["react"].mean_turns
    assert summaries["paraact"].calls_per_execute_turn > 1.0
    assert summaries["decoupled"].mean_turns == summaries["paraact"].mean_turns


@pytest.mark.parametrize("split", ["test-unseen-tools", "test-unseen-categories"])
async def test_oracle_solves_the_held_out_splits(split: str) -> None:
    config = EvalConfig(modes=["paraact"], split=split, n=3, seed=2)
    report = await evaluate_toolenv(config, oracle_policy)
    assert report.summaries[0].success_rate == 1.0
    assert {row.task_id.split("-00")[0] for row in report.episodes} == {f"{split}-2"}


async def test_prefetch_is_recorded_counted_as_surfaced_and_captioned(tmp_path: Path) -> None:
    config = EvalConfig(
        modes=["paraact"], split="test-unseen-tools", n=2, seed=1, out=tmp_path, prefetch_tools=4
    )
    report = await evaluate_toolenv(config, oracle_policy)
    assert report.prefetch_tools == 4 and report.summaries[0].success_rate == 1.0
    assert "the 4 tools best matching each task loaded before its first turn" in markdown_table(
        report
    )
    episodes = list(read_episodes(tmp_path / "trajectories-paraact.jsonl", strict=True))
    for episode, row in zip(episodes, report.episodes, strict=True):
        searched = {
            card["name"]
            for turn in episode.turns
            for result in turn.results
            if result.name == "search_tools"
            for card in result.content
        }
        assert len(episode.prefetched_tools) == 4
        assert row.loaded_tools == len(searched | set(episode.prefetched_tools))
    with pytest.raises(ConfigError, match="--prefetch-tools"):
        EvalConfig(prefetch_tools=-1)


async def test_report_files_and_trajectories(tmp_path: Path) -> None:
    tasks = generate_tasks(2, seed=5, split="test-seen")
    config = EvalConfig(modes=["paraact", "react"], n=2, seed=5, out=tmp_path)
    report = await evaluate_toolenv(config, oracle_policy, tasks=tasks)
    paths = write_report(report, tmp_path)
    assert json.loads(paths["json"].read_text())["summaries"][0]["mode"] == "paraact"
    table = paths["markdown"].read_text()
    assert (
        table == markdown_table(report)
        and "| paraact | 100.0 [34.2, 100.0] |" in table
        and "| react | 100.0 [34.2, 100.0] |" in table
    )
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    episodes = list(read_episodes(tmp_path / "trajectories-react.jsonl", strict=True))
    assert [e.task_id for e in episodes] == [t.id for t in tasks]
    assert all(e.metadata["success"] and e.metadata["metrics"]["mode"] == "react" for e in episodes)


def test_modes_expand_and_bad_options_are_config_errors() -> None:
    assert parse_modes(["all"]) == ["paraact", "react", "decoupled"]
    assert parse_modes(["react,paraact", "react"]) == ["react", "paraact"]
    with pytest.raises(ConfigError, match="unknown mode 'fast'"):
        parse_modes(["fast"])
    with pytest.raises(ConfigError, match="at least one"):
        parse_modes([" "])
    with pytest.raises(ConfigError, match="unknown split"):
        EvalConfig(split="validation")
    with pytest.raises(ConfigError, match="--n"):
        EvalConfig(n=0)
    with pytest.raises(ConfigError, match="--llm-turn-s"):
        EvalConfig(llm_turn_s=-1.0)


def test_oracle_rejects_unknown_modes_and_tools() -> None:
    task = builtin_tasks()[0]
    with pytest.raises(ConfigError, match="unknown agent mode"):
        OracleScript(task, "fast")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="missing from the catalog"):
        OracleScript(task, records=[])


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(eval_toolenv_command)
    return app


def test_cli_writes_the_report(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        _cli(),
        [
            "--mode",
            "paraact",
            "--mode",
            "react",
            "--n-tasks",
            "2",
            "--out",
            str(tmp_path),
            "--llm-turn-s",
            "0.5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "| paraact | 100.0 [34.2, 100.0] |" in result.output
    assert (tmp_path / "report.png").is_file() and (
        tmp_path / "trajectories-paraact.jsonl"
    ).is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "fast"], "unknown mode"),
        (["--split", "validation"], "unknown split"),
        (["--policy", "nope:x"], "unknown policy spec"),
    ],
)
def test_cli_bad_options_exit_2_with_a_message(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = CliRunner().invoke(_cli(), [*args, "--out", str(tmp_path)])
    assert result.exit_code == 2 and message in result.output

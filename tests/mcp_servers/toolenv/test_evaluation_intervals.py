"""Evaluation tables carry 95% intervals; reports keep per-task outcomes and compare paired."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mcp_servers.toolenv import generate_tasks
from mcp_servers.toolenv.evaluation import (
    MEAN_METRICS,
    EvalConfig,
    EvalReport,
    compare_files,
    compare_rows,
    evaluate_toolenv,
    load_outcomes,
    markdown_table,
    metric_intervals,
    write_report,
)
from mcp_servers.toolenv.oracle import oracle_policy
from paraagent_runtime.cli.eval_toolenv import eval_toolenv_command
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.intervals import DEFAULT_EVAL_TASKS, bootstrap_mean, wilson
from paraagent_runtime.tasks import EpisodeMetrics


def _row(task_id: str, *, success: bool, turns: int, mode: str = "paraact") -> EpisodeMetrics:
    return EpisodeMetrics(
        task_id=task_id, family="f", group="G1", mode=mode, status="answered", success=success,
        score=float(success), turns=turns, explore_turns=1, execute_turns=turns - 2,
        tool_calls=turns, execute_calls=turns - 2, gold_calls=1, gold_depth=1, llm_s=0.0,
        sim_tools_s=0.1 * turns, sim_wall_s=0.1 * turns, recall=1.0, loaded_tools=turns - 1,
    )  # fmt: skip


@pytest.fixture(scope="module")
def report() -> EvalReport:
    config = EvalConfig(modes=["paraact", "react", "decoupled"], n=6, seed=3, llm_turn_s=1.0)
    tasks = generate_tasks(6, seed=3, split="test-seen")
    return asyncio.run(evaluate_toolenv(config, oracle_policy, tasks=tasks))


def test_success_gets_a_wilson_interval_and_means_a_bootstrap_one() -> None:
    rows = [_row(f"t{i}", success=i % 3 != 0, turns=3 + i % 4) for i in range(12)]
    intervals = metric_intervals(rows)
    assert intervals["success"] == wilson(8, 12)
    assert set(intervals) == {"success", *MEAN_METRICS}
    assert intervals["turns"] == bootstrap_mean([float(row.turns) for row in rows])
    assert intervals["turns"].low < intervals["turns"].estimate < intervals["turns"].high


def test_a_task_sampled_several_times_is_one_item_of_its_interval() -> None:
    rows = [_row(f"t{i}", success=s, turns=3) for i in range(5) for s in (True, False)]
    intervals = metric_intervals(rows)
    assert intervals["success"].n == 5 and intervals["success"].estimate == 0.5
    # Every task's rate is exactly 0.5, so resampling tasks cannot move it.
    assert intervals["success"].low == intervals["success"].high == 0.5


def test_paired_differences_pair_by_task_and_count_the_unpaired() -> None:
    first = [_row(f"t{i}", success=True, turns=3) for i in range(6)]
    second = [_row(f"t{i}", success=i < 3, turns=5) for i in range(1, 7)]
    comparison = compare_rows("a", first, "b", second)
    assert (comparison.tasks, comparison.unpaired) == (5, 2)
    assert comparison.differences["turns"].estimate == -2.0
    assert comparison.differences["success"].estimate == pytest.approx(3 / 5)
    with pytest.raises(ConfigError, match="share no task"):
        compare_rows("a", first[:1], "b", second[-1:])


def test_every_summary_and_mode_difference_carries_intervals(report: EvalReport) -> None:
    for summary in report.summaries:
        assert summary.intervals["success"].n == 6 and summary.intervals["turns"].n == 6
        assert summary.intervals["loaded_tools"].estimate == summary.mean_loaded_tools > 0
    assert [(c.first, c.second, c.tasks) for c in report.comparisons] == [
        ("react", "paraact", 6),
        ("decoupled", "paraact", 6),
    ]
    react = report.comparisons[0].differences
    assert react["turns"].low > 0 and react["sim_wall_s"].low > 0
    table = markdown_table(report)
    assert "| paraact | 100.0 [61.0, 100.0] |" in table
    assert "| react − paraact | 6 | +0.0 [+0.0, +0.0] |" in table


def test_reports_keep_outcomes_and_compare_paired_across_files(
    report: EvalReport, tmp_path: Path
) -> None:
    write_report(report, tmp_path / "run-a")
    other = report.model_copy(
        update={
            "episodes": [
                row for row in report.episodes if row.task_id != report.episodes[0].task_id
            ]
        }
    )
    write_report(other, tmp_path / "run-b")
    saved = json.loads((tmp_path / "run-a" / "report.json").read_text())
    assert {"task_id", "success", "turns", "loaded_tools", "sim_wall_s"} <= saved["episodes"][
        0
    ].keys()
    assert set(load_outcomes(tmp_path / "run-a" / "report.json")) == {
        "paraact",
        "react",
        "decoupled",
    }
    comparisons = compare_files(
        tmp_path / "run-a" / "report.json", tmp_path / "run-b" / "report.json"
    )
    assert [(c.first, c.tasks, c.unpaired) for c in comparisons][0] == ("run-a paraact", 5, 1)
    assert all(c.differences["turns"].estimate == 0.0 for c in comparisons)


def test_a_train_eval_file_compares_against_another_policy(tmp_path: Path) -> None:
    rows = {"base": [_row(f"t{i}", success=i < 2, turns=6) for i in range(4)]}
    rows["sft"] = [_row(f"t{i}", success=True, turns=4) for i in range(4)]
    for model, outcomes in rows.items():
        entry = {"model": model, "mode": "paraact", "split": "dev"}
        entry["outcomes"] = [row.model_dump() for row in outcomes]
        (tmp_path / f"{model}.json").write_text(json.dumps([entry]))
    [comparison] = compare_files(tmp_path / "sft.json", tmp_path / "base.json")
    assert (
        comparison.first == "sft sft paraact dev" and comparison.second == "base base paraact dev"
    )
    assert comparison.differences["success"].estimate == 0.5
    assert comparison.differences["turns"].estimate == -2.0


def test_files_without_outcomes_are_config_errors(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text(json.dumps([{"model": "m", "mode": "paraact"}]))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="no per-task outcomes"):
        load_outcomes(tmp_path / "old.json")
    with pytest.raises(ConfigError, match="not an evaluation JSON"):
        load_outcomes(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="no such evaluation file"):
        load_outcomes(tmp_path / "missing.json")


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(eval_toolenv_command)
    return app


def test_cli_compare_prints_paired_intervals_and_bad_files_exit_2(
    report: EvalReport, tmp_path: Path
) -> None:
    first = write_report(report, tmp_path / "a")["json"]
    second = write_report(report, tmp_path / "b")["json"]
    result = CliRunner().invoke(_cli(), ["--compare", str(first), str(second)])
    assert result.exit_code == 0, result.output
    assert "| a react − b react | 6 | +0.0 [+0.0, +0.0] |" in result.output
    rows = [line for line in result.output.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 3 and all(line.endswith("|") for line in rows)  # three modes, unwrapped
    missing = CliRunner().invoke(_cli(), ["--compare", str(first), str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "error:" in missing.output


def test_evaluations_default_to_sixty_tasks_per_split() -> None:
    assert DEFAULT_EVAL_TASKS >= 60 and EvalConfig().n == DEFAULT_EVAL_TASKS
    default = inspect.signature(eval_toolenv_command).parameters["n_tasks"].default
    assert default == DEFAULT_EVAL_TASKS


def test_every_split_on_one_page(tmp_path: Path) -> None:
    stem = tmp_path / "summary"
    args = ["--split", "all", "--n-tasks", "1", "--mode", "paraact,react", "--llm-turn-s", "1"]
    result = CliRunner().invoke(_cli(), [*args, "--out", str(tmp_path), "--summary", str(stem)])
    assert result.exit_code == 0, result.output
    page = stem.with_suffix(".md").read_text()
    assert "--split all" in page and "--summary" in page
    # Everything the numbers depend on is in the recorded command, budgets included.
    assert "--mode paraact,react" in page and "--max-turns 12" in page and "--max-tokens" in page
    for split in ("train", "dev", "test-seen", "test-unseen-tools", "test-unseen-categories"):
        assert f"## {split}" in page and (tmp_path / split / "report.json").is_file()
    assert page.count("Example queries:") == 5
    groups = load_outcomes(stem.with_suffix(".json"))
    assert {"dev paraact", "test-unseen-categories react"} <= set(groups)
    [comparison] = [
        c
        for c in compare_files(stem.with_suffix(".json"), stem.with_suffix(".json"))
        if c.first.endswith("dev react")
    ]
    assert comparison.tasks == 1 and comparison.differences["turns"].estimate == 0.0


def test_chosen_families_narrow_the_tasks_and_name_the_scope(tmp_path: Path) -> None:
    stem = tmp_path / "hidden"
    args = ["--split", "test-seen", "--family", "flight_packing,match_budget", "--n-tasks", "4"]
    result = CliRunner().invoke(
        _cli(),
        [*args, "--mode", "paraact", "--llm-turn-s", "1", "--out", str(tmp_path / "run")]
        + ["--summary", str(stem)],
    )
    assert result.exit_code == 0, result.output
    page = stem.with_suffix(".md").read_text()
    scope = "test-seen:flight_packing+match_budget"
    assert f"## {scope}" in page and "--family flight_packing,match_budget" in page
    [rows] = load_outcomes(stem.with_suffix(".json")).values()
    assert set(load_outcomes(stem.with_suffix(".json"))) == {f"{scope} paraact"}
    assert sorted(row.family for row in rows) == ["flight_packing"] * 2 + ["match_budget"] * 2
    assert all(row.success for row in rows)


def test_chosen_families_must_exist_suit_the_split_and_the_catalog() -> None:
    with pytest.raises(ConfigError, match="--family: unknown nosuch"):
        EvalConfig(families=["nosuch"])
    with pytest.raises(ConfigError, match="may not use held-out families"):
        EvalConfig(split="dev", families=["meeting_followup"])
    with pytest.raises(ConfigError, match="only the builtin catalog"):
        EvalConfig(catalog="full", families=["match_budget"])
    assert EvalConfig(split="test-unseen-categories", families=["meeting_followup"]).families

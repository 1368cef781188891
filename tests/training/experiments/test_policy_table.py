"""The policies-over-splits table: Wilson success, hidden-need rows, paired differences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.intervals import wilson
from paraagent_runtime.tasks import EpisodeMetrics
from training.cli import train_app
from training.experiments.policy_table import (
    HIDDEN_NEED,
    FamilyCount,
    policy_table,
    write_policy_table,
)


def _row(
    task: int, family: str, *, success: bool, format_errors: int = 0, mode: str = "paraact"
) -> EpisodeMetrics:
    return EpisodeMetrics(
        task_id=f"t{task}", family=family, group="G1", mode=mode, status="answered",
        success=success, score=float(success), turns=4, explore_turns=1, execute_turns=2,
        tool_calls=3, execute_calls=2, gold_calls=2, gold_depth=1, llm_s=1.0, sim_tools_s=0.1,
        sim_wall_s=1.1, recall=1.0, format_error_turns=format_errors,
    )  # fmt: skip


def _write(path: Path, model: str, split: str, rows: list[EpisodeMetrics]) -> Path:
    entry = {"model": model, "mode": rows[0].mode, "split": split}
    entry["outcomes"] = [row.model_dump() for row in rows]
    path.write_text(json.dumps([entry]))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, list[Path]]:
    families = ["multi_city_weather", "flight_packing"]
    old = [_row(i, families[i % 2], success=i < 2, format_errors=i % 3) for i in range(8)]
    new = [_row(i, families[i % 2], success=i % 2 == 1 or i < 2) for i in range(8)]
    return {
        "v2": [_write(tmp_path / "v2.json", "v2", "dev", new)],
        "v1": [_write(tmp_path / "v1.json", "v1", "dev", old)],
    }


def test_rows_carry_wilson_success_hidden_need_rows_and_paired_differences(
    files: dict[str, list[Path]], tmp_path: Path
) -> None:
    table = policy_table(files, baseline="v1")
    rows = {(row.policy, row.split): row for row in table.rows}
    assert set(rows) == {
        (policy, split) for policy in ("v1", "v2") for split in ("dev", f"dev, {HIDDEN_NEED}")
    }
    assert rows["v1", "dev"].success == wilson(2, 8) and rows["v1", "dev"].versus_baseline is None
    assert rows["v1", "dev"].format_error_turns == pytest.approx(7 / 8)
    assert rows["v2", "dev"].success == wilson(5, 8)
    # flight_packing tasks are the odd ones: v1 solved one of them (t1), v2 all four.
    hidden = rows["v2", f"dev, {HIDDEN_NEED}"]
    assert (hidden.tasks, hidden.success.estimate) == (4, 1.0)
    assert hidden.versus_baseline is not None and hidden.versus_baseline.estimate == 0.75
    assert rows["v2", "dev"].versus_baseline.estimate == pytest.approx(3 / 8)  # type: ignore[union-attr]
    assert table.families["dev"]["flight_packing"] == {
        "v2": FamilyCount(solved=4, tasks=4),
        "v1": FamilyCount(solved=1, tasks=4),
    }
    markdown, data = write_policy_table(table, tmp_path / "out" / "table")
    assert "| v2 | dev | 8 | 62.5 [30.6, 86.3] | +37.5 [" in markdown.read_text()
    assert "| family | v2 | v1 |" in markdown.read_text()
    assert "| multi_city_weather | 1/4 | 1/4 |" in markdown.read_text()
    assert json.loads(data.read_text())["baseline"] == "v1"


def test_an_unknown_baseline_or_a_split_given_twice_is_an_error(
    files: dict[str, list[Path]],
) -> None:
    with pytest.raises(ConfigError, match="--baseline 'base'"):
        policy_table(files, baseline="base")
    with pytest.raises(ConfigError, match="split 'dev' is already given"):
        policy_table({"v1": files["v1"] * 2}, baseline="v1")


def test_other_modes_get_rows_of_their_own_and_a_report_without_splits_is_refused(
    files: dict[str, list[Path]], tmp_path: Path
) -> None:
    react = [_row(i, "multi_city_weather", success=True, mode="react") for i in range(4)]
    files["v1"].append(_write(tmp_path / "v1_react.json", "v1", "dev", react))
    splits = [row.split for row in policy_table(files, baseline="v1").rows if row.policy == "v1"]
    assert "dev react" in splits and "dev" in splits
    report = {"policy": "v1", "split": "dev", "n": 4, "seed": 0, "summaries": []}
    report["episodes"] = [row.model_dump() for row in react]
    (tmp_path / "report.json").write_text(json.dumps(report))
    with pytest.raises(ConfigError, match="carry no split"):
        policy_table({"v1": [tmp_path / "report.json"]}, baseline="v1")


def test_the_command_prints_the_table_and_misuse_exits_2(
    files: dict[str, list[Path]], tmp_path: Path
) -> None:
    args = ["table", f"v2={files['v2'][0]}", f"v1={files['v1'][0]}", "--baseline", "v1"]
    result = CliRunner().invoke(train_app, [*args, "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    assert "| v1 | dev | 8 | 25.0 [" in result.output and (tmp_path / "t.md").is_file()
    bad = CliRunner().invoke(train_app, ["table", "v2", "--baseline", "v2"])
    assert bad.exit_code == 2 and "NAME=FILE" in bad.output


def test_a_run_of_hidden_need_families_only_gets_no_duplicate_subset_row(tmp_path: Path) -> None:
    rows = [_row(i, "contact_local_time", success=i == 0) for i in range(4)]
    files = {"v2": [_write(tmp_path / "hidden.json", "v2", "test-seen", rows)]}
    [row] = policy_table(files, baseline="v2").rows
    assert (row.split, row.tasks, row.success) == ("test-seen", 4, wilson(1, 4))

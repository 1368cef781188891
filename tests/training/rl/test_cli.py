from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from training.rl.cli import rl_app


def test_help_lists_the_config_option() -> None:
    result = CliRunner().invoke(rl_app, ["--help"])
    assert result.exit_code == 0 and "--config" in result.output


def test_bad_config_file_is_one_readable_error(tmp_path: Path) -> None:
    config = tmp_path / "rl.json"
    config.write_text('{"group_size": 1}')
    result = CliRunner().invoke(rl_app, ["--config", str(config)])
    assert result.exit_code == 2 and "group_size" in result.output
    missing = CliRunner().invoke(rl_app, ["--config", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_ablation_subcommand_reports_a_bad_config_without_training(tmp_path: Path) -> None:
    config = tmp_path / "rl.yaml"
    config.write_text("group_size: 1\n")
    result = CliRunner().invoke(rl_app, ["ablation", "--config", str(config)])
    assert result.exit_code == 2 and "group_size" in result.output
    assert "--heldout-tasks" in CliRunner().invoke(rl_app, ["ablation", "--help"]).output


def test_adapter_option_rejects_a_directory_without_an_adapter(tmp_path: Path) -> None:
    result = CliRunner().invoke(rl_app, ["--adapter", str(tmp_path)])
    assert result.exit_code == 2 and "not a LoRA adapter" in result.output


def test_set_overrides_nested_rl_fields_with_a_readable_error(tmp_path: Path) -> None:
    config = tmp_path / "rl.yaml"
    config.write_text("group_size: 4\nadvantage:\n  estimator: multilevel\n")
    nested = CliRunner().invoke(rl_app, ["--config", str(config), "--set", "advantage.alpah=1"])
    assert nested.exit_code == 2 and "RLConfig.advantage: unknown field(s) alpah" in nested.output
    ablation = CliRunner().invoke(
        rl_app, ["ablation", "--config", str(config), "--set", "group_size=1"]
    )
    assert ablation.exit_code == 2 and "group_size" in ablation.output


@pytest.mark.slow
def test_train_rl_counts_its_steps_without_verbose_when_redirected(
    tiny_model: Path, tmp_path: Path
) -> None:
    from tests.runtime.cli.helpers import run_cli

    result = run_cli(
        "train", "rl", "--model", str(tiny_model), "--output-dir", str(tmp_path), "--steps", "2",
        "--set", "tasks_per_step=1", "--set", "group_size=2", "--set", "max_turns=1",
        "--set", "max_new_tokens=4", "--set", "device=cpu",
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"rl: loading {tiny_model} …"
    assert lines[1] == "rl: steps 0/2 done, 2 to go"
    assert lines[2].startswith("rl step 1/2 · ") and " elapsed · ETA " in lines[2]
    assert lines[3].startswith("rl step 2/2 · ") and " · reward " in lines[3]
    assert lines[4].startswith("done: 2 step(s) to step 2")
    assert "Loading weights" not in result.stdout + result.stderr

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.errors import ConfigError
from training.experiments.heldout import HELDOUT
from training.experiments.probe import probe_gradient
from training.rl import RLTrainer

from ..rl.helpers import rl_config as _config

FAMILIES = ["city_pair_facts"]


@pytest.fixture
def recorded(cold_start: Path, tmp_path: Path) -> Path:
    """Two held-out tasks, two sampled episodes each, as an ablation's start evaluation keeps."""
    config = _config(cold_start, tmp_path / "eval", task_families=FAMILIES)
    tasks = generate_tasks(2, seed=config.task_seed, split=HELDOUT, families=FAMILIES)
    trainer = RLTrainer(config)
    path = tmp_path / "heldout.jsonl"
    trainer.evaluate(tasks, samples=2, temperature=1.0, episodes=path)
    trainer.close()
    return path


def test_probe_runs_one_update_with_one_group_per_task(
    cold_start: Path, tmp_path: Path, recorded: Path
) -> None:
    config = _config(cold_start, tmp_path / "probe", task_families=FAMILIES)
    result = probe_gradient(config, recorded)
    assert result["groups"] == 2 and result["episodes"] == 4
    assert result["train_rows"] >= 4 and result["train_tokens"] > 0
    assert "grad_snr" not in result or math.isfinite(result["grad_snr"])


def test_probe_rejects_one_task_and_foreign_tasks(
    cold_start: Path, tmp_path: Path, recorded: Path
) -> None:
    lines = recorded.read_text().splitlines()
    one_task = tmp_path / "one.jsonl"
    one_task.write_text(
        "\n".join(
            line for line in lines if json.loads(line)["task_id"] == json.loads(lines[0])["task_id"]
        )
        + "\n"
    )
    config = _config(cold_start, tmp_path / "probe", task_families=FAMILIES)
    with pytest.raises(ConfigError, match="at least two tasks"):
        probe_gradient(config, one_task)
    other_seed = _config(cold_start, tmp_path / "probe", task_families=FAMILIES, task_seed=7)
    with pytest.raises(ConfigError, match="not one of the 2 held-out tasks"):
        probe_gradient(other_seed, recorded)


def test_probe_command_reports_a_missing_file_readably(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from training.rl.cli import rl_app

    result = CliRunner().invoke(rl_app, ["probe", "--episodes", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2 and "none.jsonl' does not exist" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)

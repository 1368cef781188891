from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime import TEST_SPLITS, save_tasks
from paraagent_runtime.errors import ConfigError
from training.cli import train_app
from training.config import (
    describe_fields,
    load_config,
    parse_assignments,
    refuse_test_tasks,
    save_config,
)
from training.demos import DemoConfig
from training.rl import RLConfig
from training.sft import SFTRunConfig

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "training" / "configs"
PAST_RUN_CONFIGS = ROOT / "docs" / "results" / "configs"


@pytest.mark.parametrize("name", sorted(p.name for p in PAST_RUN_CONFIGS.glob("*.yaml")))
def test_past_run_configs_still_load(name: str) -> None:
    """Every recorded result's config still loads: its fields and values validate today."""
    cls = DemoConfig if name.startswith("demos_") else SFTRunConfig
    config = load_config(cls, PAST_RUN_CONFIGS / name)
    assert isinstance(config.output_dir, Path) and str(config.output_dir).startswith("runs/")


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("demos_*.yaml")))
def test_shipped_demo_configs_load(name: str) -> None:
    config = load_config(DemoConfig, CONFIGS / name)
    assert config.n_tasks > 0 and isinstance(config.output_dir, Path)


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("sft_*.yaml")))
def test_shipped_sft_configs_load(name: str) -> None:
    config = load_config(SFTRunConfig, CONFIGS / name)
    assert config.max_length >= 1024 and config.lora


def test_cpu_configs_chain_together() -> None:
    demos = load_config(DemoConfig, CONFIGS / "demos_cpu.yaml")
    sft = load_config(SFTRunConfig, CONFIGS / "sft_cpu.yaml")
    assert sft.demos == (demos.output_dir / "demos.jsonl",)
    assert isinstance(demos.families, tuple)


def test_v1_recipe_continues_stage_one_not_the_shipped_adapter() -> None:
    stage1 = load_config(SFTRunConfig, CONFIGS / "sft_cpu.yaml")
    stage2 = load_config(SFTRunConfig, CONFIGS / "sft_cpu_continue.yaml")
    # The shipped adapter directory now holds v1 itself; stage 2 continues stage 1's output (v0).
    assert stage2.init_adapter == stage1.output_dir / "adapter"
    assert stage2.output_dir != stage1.output_dir and stage2.demos == stage1.demos
    assert "paraagent_runtime" not in str(stage2.init_adapter)


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_no_training_config_names_a_test_split(name: str) -> None:
    values = yaml.safe_load((CONFIGS / name).read_text())
    assert not set(_strings(values)) & set(TEST_SPLITS)


def test_overrides_win_and_none_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"n_tasks": 10, "seed": 4}')
    config = load_config(DemoConfig, path, n_tasks=3, seed=None)
    assert (config.n_tasks, config.seed) == (3, 4)


def test_round_trip_through_yaml(tmp_path: Path) -> None:
    original = SFTRunConfig(max_steps=7, lora_target_modules=("q_proj",))
    loaded = load_config(SFTRunConfig, save_config(original, tmp_path / "s.yaml"))
    assert loaded == original


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ("n_taks: 3\n", ".yaml", "unknown field.*n_taks.*known fields"),
        ("[1, 2]", ".json", "must be a mapping"),
        ("{not json", ".json", "cannot parse"),
        ("a: [unclosed\n", ".yaml", "cannot parse"),
        ("n_tasks: -1\n", ".yaml", "n_tasks"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, suffix: str, message: str) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(DemoConfig, path)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(DemoConfig, tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"max_length": 10}, "max_length"),
        ({"epochs": 0, "max_steps": -1}, "max_steps"),
        ({"batch_size": 0}, "batch_size"),
        ({"learning_rate": 3}, "learning_rate"),
        ({"lr_scheduler": "wavy"}, "lr_scheduler"),
        ({"lora_r": 0}, "lora_r"),
        ({"lora_dropout": 1.0}, "lora_dropout"),
        ({"dtype": "int8"}, "dtype"),
        ({"device": "tpu"}, "device"),
        ({"dtype": "float16", "device": "cpu"}, "float16"),
        ({"torch_threads": 0}, "torch_threads"),
        ({"save_steps": 0}, "save_steps"),
        ({"max_demos": 0}, "max_demos"),
        ({"warmup": -1}, "warmup"),
    ],
)
def test_sft_config_rejects_bad_values(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SFTRunConfig(**overrides)


def test_every_field_has_help() -> None:
    for cls in (DemoConfig, SFTRunConfig):
        assert all(text for _, _, text in describe_fields(cls))


def test_cli_demos_writes_a_dataset(tmp_path: Path) -> None:
    config = tmp_path / "d.yaml"
    config.write_text(f"n_tasks: 9\nsearch_top_k: 2\noutput_dir: {tmp_path / 'out'}\n")
    result = CliRunner().invoke(train_app, ["demos", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "kept" in result.output
    assert (tmp_path / "out" / "demos.jsonl").is_file() and (tmp_path / "out" / "card.md").is_file()


def test_cli_show_fields_and_bad_config(tmp_path: Path) -> None:
    shown = CliRunner().invoke(train_app, ["sft", "--show-fields"])
    assert shown.exit_code == 0 and "lora_r" in shown.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("lora_rank: 8\n")
    failed = CliRunner().invoke(train_app, ["sft", "--config", str(bad)])
    assert failed.exit_code == 2
    assert "lora_rank" in failed.output


def test_train_app_lists_every_stage() -> None:
    shown = CliRunner().invoke(train_app, ["--help"])
    assert shown.exit_code == 0
    for command in ("demos", "sft", "eval", "rl"):
        assert command in shown.output


def test_exponent_without_a_dot_is_a_number(tmp_path: Path) -> None:
    # PyYAML reads 1e-4 (no dot) as a string; a number-typed field takes it as the number.
    path = tmp_path / "s.yaml"
    path.write_text("learning_rate: 1e-4\nmax_steps: '12'\n")
    config = load_config(SFTRunConfig, path)
    assert config.learning_rate == pytest.approx(1e-4) and config.max_steps == 12


def test_a_word_for_a_number_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("learning_rate: fast\n")
    with pytest.raises(ConfigError, match=r"SFTRunConfig.learning_rate: expected a number"):
        load_config(SFTRunConfig, path)


def test_assignments_sit_between_the_file_and_named_overrides(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("n_tasks: 10\nseed: 4\n")
    config = load_config(
        DemoConfig, path, assignments=["seed=7", "n_tasks=5", "families=[email_contact]"], n_tasks=3
    )
    assert (config.n_tasks, config.seed, config.families) == (3, 7, ("email_contact",))


def test_parse_assignments_nests_dotted_fields_and_reads_yaml() -> None:
    parsed = parse_assignments(
        ["advantage.alpha=2", "advantage.estimator=grpo", "lora=true", "model=", "note=a=b"]
    )
    assert parsed == {
        "advantage": {"alpha": 2, "estimator": "grpo"},
        "lora": True,
        "model": None,
        "note": "a=b",
    }


@pytest.mark.parametrize("assignment", ["steps", "=3", "advantage..alpha=1", ".alpha=1"])
def test_malformed_assignments_are_config_errors(assignment: str) -> None:
    with pytest.raises(ConfigError, match="FIELD=VALUE"):
        parse_assignments([assignment])


def test_a_dotted_assignment_into_a_plain_value_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("seed: 4\n")
    with pytest.raises(ConfigError, match="seed is 4, not a mapping"):
        load_config(DemoConfig, path, assignments=["seed.value=1"])
    with pytest.raises(ConfigError, match="unknown field.*n_taks"):
        load_config(DemoConfig, path, assignments=["n_taks=1"])


def test_cli_set_reaches_the_config(tmp_path: Path) -> None:
    config = tmp_path / "d.yaml"
    config.write_text(f"n_tasks: 9\noutput_dir: {tmp_path / 'out'}\n")
    failed = CliRunner().invoke(train_app, ["demos", "-c", str(config), "--set", "n_tasks=-1"])
    assert failed.exit_code == 2 and "n_tasks" in failed.output
    malformed = CliRunner().invoke(train_app, ["sft", "--set", "max_steps"])
    assert malformed.exit_code == 2 and "FIELD=VALUE" in malformed.output


@pytest.mark.parametrize("split", TEST_SPLITS)
def test_training_configs_refuse_every_test_split(split: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="test split"):
        DemoConfig(split=split)
    with pytest.raises(ConfigError, match="RLConfig.task_split"):
        RLConfig(task_split=split)
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks(
        [*generate_tasks(1, seed=0, split="train"), *generate_tasks(1, seed=0, split=split)],
        tasks_file,
    )
    with pytest.raises(ConfigError, match=f"tasks_file .*task {split}-"):
        RLConfig(tasks_file=tasks_file).training_tasks()


def test_training_configs_take_train_and_dev() -> None:
    assert DemoConfig(split="dev").split == "dev"
    assert [task.split for task in RLConfig(task_split="dev", n_tasks=2).training_tasks()] == [
        "dev",
        "dev",
    ]
    tasks = generate_tasks(2, seed=0, split="train")
    assert refuse_test_tasks(iter(tasks), owner="x") == tasks

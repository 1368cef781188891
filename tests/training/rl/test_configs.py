from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from training.rl import RLConfig

CONFIGS = Path(__file__).resolve().parents[3] / "training" / "configs"


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("rl_*.yaml")))
def test_shipped_rl_configs_validate(name: str) -> None:
    values = yaml.safe_load((CONFIGS / name).read_text())
    adapter = Path(values.pop("adapter"))
    # The CPU config continues the shipped adapter; the GPU ones an SFT output made by a run.
    shipped = CONFIGS.parents[1] / adapter / "adapter_config.json"
    assert adapter.name == "adapter" or shipped.is_file()
    config = RLConfig(**values)
    assert config.lora and config.advantage.estimator == "multilevel"


@pytest.mark.parametrize(
    "name",
    ["accelerate_deepspeed_zero2.yaml", "accelerate_deepspeed_zero3.yaml", "accelerate_fsdp.yaml"],
)
def test_accelerate_configs_name_a_distributed_type(name: str) -> None:
    values = yaml.safe_load((CONFIGS / name).read_text())
    assert values["distributed_type"] in ("DEEPSPEED", "FSDP") and values["num_processes"] >= 1

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from training.rl import RLConfig

CONFIGS = Path(__file__).resolve().parents[3] / "training" / "configs"


@pytest.mark.parametrize(
    "name", ["rl_cpu.yaml", "rl_gpu_qwen3_4b.yaml", "rl_gpu_qwen3_4b_server.yaml"]
)
def test_shipped_rl_configs_validate(name: str) -> None:
    values = yaml.safe_load((CONFIGS / name).read_text())
    assert values.pop("adapter").endswith("/adapter")  # an SFT output, absent until SFT ran
    config = RLConfig(**values)
    assert config.lora and config.advantage.estimator == "multilevel"


@pytest.mark.parametrize(
    "name",
    ["accelerate_deepspeed_zero2.yaml", "accelerate_deepspeed_zero3.yaml", "accelerate_fsdp.yaml"],
)
def test_accelerate_configs_name_a_distributed_type(name: str) -> None:
    values = yaml.safe_load((CONFIGS / name).read_text())
    assert values["distributed_type"] in ("DEEPSPEED", "FSDP") and values["num_processes"] >= 1

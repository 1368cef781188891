"""ort_weights: an export updated in place with LoRA-merged weights equals the builder's export."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.policy import OnnxGenAIPolicy, SamplingParams, TransformersPolicy
from paraagent_runtime.policy.ort_export import ensure_ort_model
from paraagent_runtime.policy.ort_weights import linear_weights, write_linear_weights
from paraagent_runtime.policy.transformers_local import quiet_peft

from .local_contract import CONVERSATION

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime_genai") is None
    or importlib.util.find_spec("onnx_ir") is None,
    reason="onnxruntime-genai is not installed",
)


@pytest.fixture(scope="module")
def trained_adapter(varied_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter on the varied tiny model with non-zero (random) B: it changes turns."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(varied_model_dir)
    lora = LoraConfig(
        r=4,
        lora_alpha=8,
        target_modules=["q_proj", "v_proj", "o_proj", "down_proj"],
        task_type="CAUSAL_LM",
    )
    with quiet_peft():
        peft_model = get_peft_model(model, lora)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, weight in peft_model.named_parameters():
            if "lora_B" in name:
                weight.copy_(torch.randn(weight.shape, generator=generator) * 0.5)
    path = tmp_path_factory.mktemp("trained-adapter")
    peft_model.save_pretrained(path)
    return path


def _initializers(export: Path) -> dict[str, np.ndarray]:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(export / "model.onnx", load_external_data=True)
    return {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}


async def test_updated_export_equals_the_rebuilt_one(
    varied_model_dir: Path,
    varied_export: Path,
    export_cache: Path,
    trained_adapter: Path,
    tmp_path: Path,
) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base_export = varied_export
    rebuilt = ensure_ort_model(varied_model_dir, adapter=trained_adapter, cache_dir=export_cache)
    with quiet_peft():
        trained = PeftModel.from_pretrained(
            AutoModelForCausalLM.from_pretrained(varied_model_dir), trained_adapter
        )
    updated = write_linear_weights(base_export, linear_weights(trained), tmp_path / "step-1")

    expected, got, base = (_initializers(path) for path in (rebuilt, updated, base_export))
    assert expected.keys() == got.keys()
    changed = [name for name in got if not np.array_equal(got[name], base[name])]
    assert changed and all(".MatMul.weight" in name for name in changed)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, atol=1e-6, err_msg=name)

    policy = OnnxGenAIPolicy(varied_model_dir, cache_dir=export_cache)
    sampling = SamplingParams(max_tokens=12)
    before = await policy.complete(CONVERSATION, sampling=sampling)
    policy.use_export(updated)
    after = await policy.complete(CONVERSATION, sampling=sampling)
    reference = TransformersPolicy(varied_model_dir, adapter=trained_adapter, prefix_cache_mb=0)
    slow = await reference.complete(CONVERSATION, sampling=sampling)
    assert after.token_ids == slow.token_ids != before.token_ids
    assert after.logprobs == pytest.approx(slow.logprobs, abs=1e-3)


def test_a_missing_layer_is_refused(
    varied_model_dir: Path, varied_export: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    export = varied_export
    weights = linear_weights(AutoModelForCausalLM.from_pretrained(varied_model_dir))
    assert weights and all(value.dtype == np.float32 for value in weights.values())
    some = dict(weights)
    some.pop(next(name for name in weights if name.endswith("k_proj")))
    with pytest.raises(ConfigError, match="no weight for .*k_proj"):
        write_linear_weights(export, some, tmp_path / "out")
    assert not (tmp_path / "out").exists()


async def test_a_fresh_export_drafts_from_its_adapters_seed_memory(
    varied_model_dir: Path, trained_adapter: Path, tmp_path: Path
) -> None:
    import shutil

    from paraagent_runtime.policy.ort_export import DRAFT_MEMORY_FILE

    adapter = tmp_path / "adapter"
    shutil.copytree(trained_adapter, adapter)
    ensure_ort_model(varied_model_dir, adapter=adapter, cache_dir=tmp_path / "a")
    sampling = SamplingParams(max_tokens=16)
    first = OnnxGenAIPolicy(
        varied_model_dir, adapter=adapter, keep_drafts=False, cache_dir=tmp_path / "a"
    )
    reference = await first.complete(CONVERSATION, sampling=sampling)
    first._draft_memory.save(adapter / DRAFT_MEMORY_FILE)
    (adapter / "README.md").write_text("a model card edit")
    seeded = OnnxGenAIPolicy(varied_model_dir, adapter=adapter, cache_dir=tmp_path / "a")
    # Neither the seed nor the card is part of the export's key: the export is reused.
    assert seeded.export_dir == first.export_dir
    again = await seeded.complete(CONVERSATION, sampling=sampling)
    assert again.token_ids == reference.token_ids
    assert seeded.draft_stats.accepted >= 10 and first.draft_stats.accepted == 0
    await seeded.aclose()
    assert (seeded.export_dir / DRAFT_MEMORY_FILE).is_file()

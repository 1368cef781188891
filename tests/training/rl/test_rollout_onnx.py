"""RL rollouts on ONNX Runtime GenAI: the engine follows the trained adapter after every update."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from paraagent_runtime import ConfigError, Message, SamplingParams
from training.rl import RLConfig
from training.rl.rollout import EXPORTS_DIR, OnnxRollouts
from training.rl.trainer import RLTrainer

from .helpers import rl_config, rl_task

needs_engine = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime_genai") is None
    or importlib.util.find_spec("onnx_ir") is None,
    reason="onnxruntime-genai is not installed",
)


def test_onnx_rollouts_need_lora_and_the_cpu() -> None:
    with pytest.raises(ConfigError, match="lora: true"):
        RLConfig(rollout_backend="onnx")
    with pytest.raises(ConfigError, match="CPU"):
        RLConfig(rollout_backend="onnx", lora=True, device="cuda")


@needs_engine
def test_lora_steps_roll_out_on_onnx_with_the_updated_weights(
    cold_start: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAAGENT_CACHE", str(tmp_path / "cache"))  # the tiny model's export
    config = rl_config(cold_start, tmp_path, lora=True, rollout_backend="onnx", save_every=10)
    trainer = RLTrainer(config, tasks=[rl_task()])
    try:
        assert isinstance(trainer.engine, OnnxRollouts)
        history = trainer.train()
        assert [m["step"] for m in history] == [1, 2]
        assert all(m["rollout_tokens"] > 0 for m in history)
        # What the next step would roll out with: the weights after the second update.
        trainer._loop.run_until_complete(trainer.engine.sync(trainer.rl_model, trainer.step))
        assert trainer.engine.last_sync_s > 0
        assert [p.name for p in (tmp_path / EXPORTS_DIR).iterdir()] == [f"step-{trainer.step}"]
        messages = [Message(role="user", content=rl_task().query)]
        sampling = SamplingParams(max_tokens=8)
        fast, slow = (
            trainer._loop.run_until_complete(policy.complete(messages, sampling=sampling))
            for policy in (trainer.engine.policy, trainer.rl_model.policy)
        )
        assert fast.token_ids == slow.token_ids
        assert fast.logprobs == pytest.approx(slow.logprobs, abs=1e-3)
    finally:
        trainer.close()
    assert not (tmp_path / EXPORTS_DIR).exists()

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from benchmarks import rl_update as benchmark


def test_update_benchmark_reports_each_precision_side_by_side(
    capsys: pytest.CaptureFixture[str],
) -> None:
    benchmark.main(["--length", "64", "--repeats", "1", "--threads", "1", "--lora"])
    out = capsys.readouterr().out
    report = json.loads(out.splitlines()[0])
    assert [row["dtype"] for row in report["results"]] == ["float32", "bfloat16"]
    assert report["lora"] and report["trained_tokens"] == int(benchmark.episode_mask(64, 0.2).sum())
    assert report["results"][0]["speedup_vs_first"] == 1.0
    assert all(row["kept_logits_s"] > 0 and row["kept_speedup"] > 0 for row in report["results"])
    assert "bfloat16" in out.split("\n", 1)[1]  # the table follows the JSON


def test_update_benchmark_rejects_an_unknown_precision(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        benchmark.main(["--dtypes", "float32,fp8"])
    assert exit_info.value.code == 2
    assert "unknown fp8" in capsys.readouterr().err


def _episode(prompt: list[int], sampled: list[int]) -> str:
    turn = {"prompt_token_ids": prompt, "token_ids": sampled}
    return json.dumps({"turns": [{"prompt_token_ids": [1], "token_ids": [2]}, turn]})


def test_update_benchmark_measures_each_precision_against_the_first_on_recorded_turns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    episodes = tmp_path / "episodes.jsonl"
    lines = [_episode([5, 6, 7, 8], [9, 10, 11]), _episode([3] * 6, [4, 4]), _episode([1], [])]
    episodes.write_text("\n".join(lines) + "\n")
    argv = ["--length", "64", "--repeats", "1", "--threads", "1"]
    benchmark.main([*argv, "--episodes", str(episodes)])
    out = capsys.readouterr().out
    report = json.loads(out.splitlines()[0])
    # The last turn of each episode that sampled something: the third has no sampled token.
    assert report["episodes"] == 2
    assert benchmark.recorded_turns(episodes, 1) == [([5, 6, 7, 8], [9, 10, 11])]
    float32, bfloat16 = report["results"]
    assert float32["kl_vs_first"] == 0.0
    # bf16 rounding moves the distribution of a random-init model a little (KL ≥ 0 up to float
    # error), so the sampled tokens score differently, though close.
    assert -1e-6 < bfloat16["kl_vs_first"] < 0.05
    assert float32["nll"] > 0 and 0 < abs(bfloat16["nll"] - float32["nll"]) < 0.1
    assert f"{float32['nll']:.4f}" in out.split("\n", 1)[1]  # the table shows fidelity too


def test_update_benchmark_rejects_episodes_without_token_ids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    episodes = tmp_path / "episodes.jsonl"
    episodes.write_text(json.dumps({"turns": [{"text": "no ids"}]}) + "\n")
    with pytest.raises(SystemExit) as exit_info:
        benchmark.main(["--episodes", str(episodes)])
    assert exit_info.value.code == 2
    assert "episodes.jsonl:1: not an episode with token ids" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        benchmark.main(["--episodes", str(episodes), "--max-episodes", "0"])
    assert exit_info.value.code == 2
    assert "--max-episodes: need >= 1, got 0" in capsys.readouterr().err


def test_a_saved_adapter_trains_without_its_dropout_as_rl_does(tmp_path: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from paraagent_runtime.policy.tiny import build_tiny_model
    from paraagent_runtime.policy.transformers_local import quiet_peft

    source = build_tiny_model(tmp_path / "tiny")
    lora = LoraConfig(r=2, lora_dropout=0.3, target_modules=["q_proj"], task_type="CAUSAL_LM")
    with quiet_peft():
        adapted = get_peft_model(AutoModelForCausalLM.from_pretrained(source), lora)
    adapted.save_pretrained(tmp_path / "adapter")
    model = benchmark.load_model(source, "float32", adapter=tmp_path / "adapter")
    dropouts = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(m.p == 0 for m in dropouts) and model.training
    assert any(p.requires_grad for p in model.parameters())

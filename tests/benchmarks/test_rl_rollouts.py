from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from benchmarks import rl_rollouts as benchmark
from paraagent_runtime.policy.tiny import build_tiny_model


@pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime_genai") is None
    or importlib.util.find_spec("onnx_ir") is None,
    reason="onnxruntime-genai is not installed",
)
def test_rollout_benchmark_runs_each_backend_on_the_same_step(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAAGENT_CACHE", str(tmp_path / "cache"))  # the tiny model's export
    model = build_tiny_model(tmp_path / "tiny", seed=0)
    overrides = ["adapter=null", "tasks_per_step=1", "group_size=2", "max_turns=1"]
    overrides += ["max_new_tokens=4", "max_length=4096"]
    benchmark.main(
        ["--json", str(tmp_path / "report.json"), "--set", f"model={model}"]
        + [arg for value in overrides for arg in ("--set", value)]
    )
    out = capsys.readouterr().out
    report = json.loads((tmp_path / "report.json").read_text())
    assert out.startswith("{") and "speed-up" in out
    transformers, onnx = report["results"]
    assert (transformers["backend"], onnx["backend"]) == ("transformers", "onnx")
    assert report["rollouts"] == 2 and transformers["speedup"] == 1.0
    assert transformers["sync_s"] == 0 < onnx["sync_s"] < onnx["rollout_s"]
    assert all(row["rollout_tokens"] > 0 and row["update_s"] > 0 for row in report["results"])

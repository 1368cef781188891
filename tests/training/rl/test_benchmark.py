from __future__ import annotations

import json
import sys

import pytest

from training.rl import benchmark


def test_update_benchmark_reports_each_precision_side_by_side(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["benchmark", "--length", "64", "--repeats", "1", "--threads", "1", "--lora"]
    monkeypatch.setattr(sys, "argv", argv)
    benchmark.main()
    out = capsys.readouterr().out
    report = json.loads(out.splitlines()[0])
    assert [row["dtype"] for row in report["results"]] == ["float32", "bfloat16"]
    assert report["lora"] and report["trained_tokens"] == int(benchmark.episode_mask(64, 0.2).sum())
    assert report["results"][0]["speedup_vs_first"] == 1.0
    assert all(row["kept_logits_s"] > 0 and row["kept_speedup"] > 0 for row in report["results"])
    assert "bfloat16" in out.split("\n", 1)[1]  # the table follows the JSON


def test_update_benchmark_rejects_an_unknown_precision(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["benchmark", "--dtypes", "float32,fp8"])
    with pytest.raises(SystemExit) as exit_info:
        benchmark.main()
    assert exit_info.value.code == 2
    assert "unknown fp8" in capsys.readouterr().err

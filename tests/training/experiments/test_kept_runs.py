from __future__ import annotations

from pathlib import Path

import pytest

from training.experiments.kept_runs import keep, restore


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_kept_files_keep_the_run_layout_and_missing_ones_are_skipped(tmp_path: Path) -> None:
    runs, kept = tmp_path / "runs", tmp_path / "kept"
    score = _write(runs / "grpo-seed0" / "heldout.json", "{}")
    _write(runs / "grpo-seed0" / "checkpoint" / "adapter.bin", "weights")
    keep(runs, kept, [score, runs / "grpo-seed0" / "heldout.jsonl"])
    assert sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file()) == [
        "grpo-seed0/heldout.json"
    ]
    with pytest.raises(ValueError):
        keep(runs, kept, [_write(tmp_path / "elsewhere.json", "{}")])


def test_restore_fills_in_only_what_the_run_folder_lacks(tmp_path: Path) -> None:
    runs, kept = tmp_path / "runs", tmp_path / "kept"
    assert restore(kept, runs) == []
    _write(kept / "start.json", "kept start")
    _write(kept / "gdpo-seed1" / "metrics.jsonl", "kept rows")
    _write(runs / "start.json", "newer start")
    assert restore(kept, runs) == [runs / "gdpo-seed1" / "metrics.jsonl"]
    assert (runs / "start.json").read_text() == "newer start"
    assert (runs / "gdpo-seed1" / "metrics.jsonl").read_text() == "kept rows"
    assert restore(kept, runs) == []

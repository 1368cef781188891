from __future__ import annotations

import gzip
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


def test_episode_files_are_kept_gzipped_the_same_bytes_every_time_and_restored_plain(
    tmp_path: Path,
) -> None:
    runs, kept = tmp_path / "runs", tmp_path / "kept"
    episodes = _write(runs / "gdpo-seed0" / "heldout.jsonl", '{"task_id": "t"}\n' * 500)
    # Kept uncompressed by an earlier version: keeping again replaces it with the .gz.
    _write(kept / "gdpo-seed0" / "heldout.jsonl", "old copy")
    keep(runs, kept, [episodes])
    packed = kept / "gdpo-seed0" / "heldout.jsonl.gz"
    assert [p.name for p in packed.parent.iterdir()] == ["heldout.jsonl.gz"]
    assert gzip.decompress(packed.read_bytes()) == episodes.read_bytes()
    assert packed.stat().st_size < episodes.stat().st_size / 10
    first = packed.read_bytes()
    keep(runs, kept, [episodes])
    assert packed.read_bytes() == first

    fresh = tmp_path / "fresh"
    assert restore(kept, fresh) == [fresh / "gdpo-seed0" / "heldout.jsonl"]
    assert (fresh / "gdpo-seed0" / "heldout.jsonl").read_bytes() == episodes.read_bytes()
    assert restore(kept, fresh) == []

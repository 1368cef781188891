"""Episode files read back: plain and gzipped, damaged ones keep what was written before."""

from __future__ import annotations

import gzip
import logging

import pytest

from paraagent_runtime import ConfigError, Episode, TrajectoryWriter, read_episodes


@pytest.fixture
def episodes_file(tmp_path):
    path = tmp_path / "episodes.jsonl"
    with TrajectoryWriter(path) as writer:
        for index in range(40):
            writer.write(Episode(task=f"task {index}", answer="x" * 200 + str(index)))
    return path


def test_a_gzipped_file_reads_as_the_plain_one(episodes_file, tmp_path) -> None:
    packed = tmp_path / "episodes.jsonl.gz"
    packed.write_bytes(gzip.compress(episodes_file.read_bytes()))
    assert list(read_episodes(packed)) == list(read_episodes(episodes_file))


def test_a_cut_gzip_keeps_its_first_episodes_unless_strict(episodes_file, tmp_path, caplog) -> None:
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(episodes_file.read_bytes())[:-200])
    with caplog.at_level(logging.WARNING, logger="paraagent_runtime.trajectory"):
        kept = list(read_episodes(cut))
    assert 0 < len(kept) < 40
    assert [episode.task for episode in kept] == [f"task {i}" for i in range(len(kept))]
    assert "cut.jsonl.gz: unreadable after line" in caplog.text
    with pytest.raises(ConfigError, match=r"cut.jsonl.gz: unreadable after line \d+"):
        list(read_episodes(cut, strict=True))


@pytest.mark.parametrize("strict", [False, True])
def test_a_file_that_cannot_be_read_is_a_config_error(tmp_path, strict) -> None:
    with pytest.raises(ConfigError, match="missing.jsonl: cannot read it"):
        list(read_episodes(tmp_path / "missing.jsonl", strict=strict))
    (tmp_path / "bytes.jsonl").write_bytes(b"\xff\xfe not text")
    if strict:
        with pytest.raises(ConfigError, match="bytes.jsonl: unreadable after line 0"):
            list(read_episodes(tmp_path / "bytes.jsonl", strict=True))
    else:
        assert list(read_episodes(tmp_path / "bytes.jsonl")) == []

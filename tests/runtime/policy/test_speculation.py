"""Draft proposals for speculative greedy decoding: longest match, memory, adaptive length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paraagent_runtime.policy.speculation import DraftMemory, PromptLookup


def test_the_longest_earlier_match_proposes_what_followed_it() -> None:
    lookup = PromptLookup(max_draft=4)
    # "3 4" occurs twice: after "1 2 3 4" comes 5 6, after "9 3 4" comes 7 8; the sequence ends
    # "2 3 4", so the longer match (three tokens) wins over the later one (two tokens).
    sequence = [1, 2, 3, 4, 5, 6, 9, 3, 4, 7, 8, 0, 2, 3, 4]
    assert lookup.propose(sequence) == [5, 6, 9, 3]


def test_among_equal_matches_the_latest_wins_and_nothing_matches_nothing() -> None:
    lookup = PromptLookup(max_draft=2)
    assert lookup.propose([5, 1, 2, 5, 3, 4, 5]) == [3, 4]
    assert lookup.propose([1, 2, 3]) == []


def test_memory_supplies_drafts_the_sequence_lacks_and_wins_ties() -> None:
    memory = DraftMemory()
    memory.add([10, 11], [12, 13, 14])
    lookup = PromptLookup(max_draft=3, memory=memory)
    assert lookup.propose([99, 10, 11]) == [12, 13, 14]
    # The prompt's end is kept in front of the output, so a turn's opening matches.
    assert lookup.propose([11, 12, 50, 11]) == [12, 13, 14]


def test_memory_keeps_its_newest_tokens_within_its_budget() -> None:
    memory = DraftMemory(max_tokens=10)
    for start in range(0, 40, 4):
        memory.add([], list(range(start, start + 4)))
    assert memory.tokens().tolist() == [32, 33, 34, 35, 36, 37, 38, 39]
    DraftMemory(max_tokens=0).add([1], [2])


def test_forced_tokens_lead_and_the_lookup_continues_after_them() -> None:
    lookup = PromptLookup(max_draft=4)
    assert lookup.propose([1, 2, 3, 4, 9, 1], forced=[2]) == [2, 3, 4, 9]


def test_draft_length_grows_after_full_acceptance_and_shrinks_after_a_miss() -> None:
    lookup = PromptLookup(max_draft=10)
    sequence = list(range(20)) + [0]
    assert len(lookup.propose(sequence)) == 6
    lookup.record(6, 6)
    assert len(lookup.propose(sequence)) == 8
    lookup.record(8, 3)
    lookup.record(7, 0)
    assert len(lookup.propose(sequence)) == 6
    assert lookup.stats.drafted == 21 and lookup.stats.accepted == 9
    assert lookup.stats.acceptance == 9 / 21
    lookup.record(0, 0)
    assert lookup.stats.passes == 3


def test_max_draft_zero_turns_drafting_off() -> None:
    assert PromptLookup(max_draft=0).propose([1, 2, 1], forced=[2]) == []


def test_a_saved_memory_loads_before_newer_outputs(tmp_path: Path) -> None:
    memory = DraftMemory()
    memory.add([1, 2], [3, 4])
    memory.add([], [5])
    path = tmp_path / "drafts" / "memory.npz"
    memory.save(path)
    assert not memory.changed
    later = DraftMemory()
    later.add([], [9])
    later.load(path)
    assert later.tokens().tolist() == [1, 2, 3, 4, 5, 9]
    DraftMemory().load(tmp_path / "missing.npz")


def test_a_broken_memory_file_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "memory.npz"
    broken.write_bytes(b"not a zip")
    mismatched = tmp_path / "mismatched.npz"
    np.savez(mismatched, tokens=np.arange(3), lengths=np.asarray([5]))
    memory = DraftMemory()
    for path in (broken, mismatched):
        memory.load(path)
    assert memory.tokens().tolist() == []
    assert caplog.text.count("draft memory at") == 2
    unwritable = tmp_path / "file"
    unwritable.write_text("")
    memory.add([], [1])
    memory.save(unwritable / "memory.npz")
    assert "not saved" in caplog.text and memory.changed

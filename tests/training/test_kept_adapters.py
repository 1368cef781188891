"""The adapters kept in ``docs/results/adapters`` are the ones their tables were measured with."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from paraagent_runtime.policy.adapter_weights import ARCHIVE_NOTE, WEIGHT_FILES

KEPT = Path(__file__).resolve().parents[2] / "docs" / "results" / "adapters"


def _recorded() -> dict[str, str]:
    lines = (KEPT / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {path: digest for digest, path in (line.split() for line in lines if line)}


def _kept_dirs() -> list[Path]:
    return sorted(path.parent for path in KEPT.glob("*/adapter_config.json"))


def test_every_kept_adapter_has_a_recorded_digest() -> None:
    recorded = _recorded()
    assert {f"{d.name}/{WEIGHT_FILES[0]}" for d in _kept_dirs()} == set(recorded)


@pytest.mark.parametrize("adapter", _kept_dirs(), ids=lambda d: d.name)
def test_weights_present_match_their_digest_or_are_archived(adapter: Path) -> None:
    weights = adapter / WEIGHT_FILES[0]
    if weights.exists():
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()
        assert digest == _recorded()[f"{adapter.name}/{WEIGHT_FILES[0]}"]
    else:
        assert (adapter / ARCHIVE_NOTE).read_text(encoding="utf-8").split()[0]


@pytest.mark.parametrize(
    "adapter", [d for d in _kept_dirs() if (d / ARCHIVE_NOTE).is_file()], ids=lambda d: d.name
)
def test_the_archive_commit_holds_the_recorded_weights(adapter: Path) -> None:
    commit = (adapter / ARCHIVE_NOTE).read_text(encoding="utf-8").split()[0]
    path = f"docs/results/adapters/{adapter.name}/{WEIGHT_FILES[0]}"
    shown = subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=KEPT, capture_output=True, check=False
    )
    if shown.returncode != 0:
        pytest.skip(f"this checkout's history lacks {commit} (a shallow clone)")
    assert (
        hashlib.sha256(shown.stdout).hexdigest() == _recorded()[f"{adapter.name}/{WEIGHT_FILES[0]}"]
    )

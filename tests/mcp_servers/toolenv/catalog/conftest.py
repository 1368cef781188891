"""Fixtures: small real inputs linked (never copied) from where the data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.toolenv.catalog import botocore_source, google_source
from mcp_servers.toolenv.catalog._shared_data import SHARED_DATA


def link_all(target: Path, sources: list[Path]) -> Path:
    """Make ``target`` a folder of symlinks to ``sources``."""
    target.mkdir(parents=True, exist_ok=True)
    for source in sources:
        (target / source.name).symlink_to(source)
    return target


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder; the test is skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture
def botocore_dir(tmp_path: Path) -> Path:
    """Two real botocore services (s3, sqs) behind symlinks."""
    root = botocore_source.default_path()
    assert root is not None
    return link_all(tmp_path / "botocore", [root / "s3", root / "sqs"])


@pytest.fixture
def google_dir(tmp_path: Path) -> Path:
    """Real discovery documents: drive v2 and v3 (two versions of one API) and tasks v1."""
    root = google_source.default_path()
    assert root is not None
    names = ["drive.v2.json", "drive.v3.json", "tasks.v1.json"]
    return link_all(tmp_path / "google", [root / name for name in names])

"""Where the project's shared data folder is (``<repo>/../shared/data``) and its subfolders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["SHARED_DATA", "shared_path"]

SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def shared_path(folder: str) -> Callable[[], Path | None]:
    """A default-path function: ``SHARED_DATA/folder`` when it exists, else None."""

    def default() -> Path | None:
        path = SHARED_DATA / folder
        return path if path.is_dir() else None

    return default

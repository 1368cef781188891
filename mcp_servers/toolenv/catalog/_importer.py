"""The shape every importer has, and file helpers they share."""

from __future__ import annotations

import gzip
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.records import ToolRecord

from .model import SourceReport

__all__ = ["ImportContext", "Importer", "files_under", "load_json"]

logger = logging.getLogger(__name__)


def _no_progress(count: int = 1) -> None:
    return None


@dataclass
class ImportContext:
    """What an importer gets besides its path.

    Attributes:
        report: where to count kept, skipped, repaired and merged records.
        present: the names of all sources in this build (to skip overlaps, e.g. OpenAPI specs of
            AWS when botocore is imported too).
        advance: called once per finished unit of work (file) for progress display.
    """

    report: SourceReport
    present: frozenset[str] = frozenset()
    advance: Callable[[int], None] = field(default=_no_progress)


@dataclass(frozen=True)
class Importer:
    """One catalog source: how to find its data, size its work and read its records."""

    name: str
    read: Callable[[Path, ImportContext], Iterator[ToolRecord]]
    units: Callable[[Path], int]
    default_path: Callable[[], Path | None]
    real: bool = True


def load_json(path: Path, report: SourceReport) -> Any:
    """Parse a ``.json``/``.json.gz`` file.

    An unreadable file is skipped (counted), never raised.
    """
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return json.loads(raw)
    except (OSError, EOFError, ValueError) as error:
        logger.warning("skipping unreadable file %s: %s", path, error)
        report.skip("invalid_json_file")
        return None


def files_under(root: Path, suffix: str = "") -> list[Path]:
    """Every file below ``root`` ending in ``suffix``, sorted, following symlinked folders."""
    found = [
        Path(folder) / name
        for folder, _, names in os.walk(root, followlinks=True)
        for name in names
        if name.endswith(suffix)
    ]
    return sorted(found)

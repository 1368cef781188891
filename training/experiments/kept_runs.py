"""A second home for the small files of finished runs, so an experiment survives a lost machine.

Long experiments (the RL ablation: hours per run on CPU) outlive the machine they started on. Their
checkpoints are too large to keep, but a *finished* run is fully described by a few small files
(its logged steps and held-out score and episodes), and those are all a report reads back. A keep
folder (typically under version control) holds copies of them in the run folder's layout:
:func:`keep` copies them there once a run is finished; :func:`restore` copies back whatever the run
folder lacks before anything is read, so a fresh machine resumes with the finished runs read back,
not retrained. Files already in the run folder are never overwritten (they are as new or newer).
JSON-lines files (episodes with their token ids: about 1 MB a run) are kept gzipped, byte for
byte the same for the same content, so keeping a run again changes nothing under version control.
"""

from __future__ import annotations

import gzip
import logging
import shutil
from collections.abc import Iterable
from pathlib import Path

__all__ = ["keep", "restore"]

logger = logging.getLogger(__name__)

_COMPRESSED_SUFFIX = ".jsonl"


def keep(run_root: Path, keep_dir: Path, files: Iterable[Path]) -> None:
    """Copy each existing file of ``files`` (under ``run_root``) to its place in ``keep_dir``.

    Raises:
        ValueError: a file lies outside ``run_root``.
    """
    for path in files:
        if not path.is_file():
            continue
        target = keep_dir / path.relative_to(run_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix != _COMPRESSED_SUFFIX:
            shutil.copyfile(path, target)
            continue
        packed = target.with_name(target.name + ".gz")
        # mtime 0 and no file name in the header: the same content gives the same bytes.
        with path.open("rb") as source, packed.open("wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as sink:
                shutil.copyfileobj(source, sink)
        target.unlink(missing_ok=True)  # kept uncompressed before: the .gz replaces it


def restore(keep_dir: Path, run_root: Path) -> list[Path]:
    """Copy every file of ``keep_dir`` that ``run_root`` lacks back into it; the copies made."""
    if not keep_dir.is_dir():
        return []
    restored = []
    for source in sorted(keep_dir.rglob("*")):
        target = run_root / source.relative_to(keep_dir)
        packed = source.name.endswith(_COMPRESSED_SUFFIX + ".gz")
        if packed:
            target = target.with_suffix("")
        if not source.is_file() or target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if packed:
            with gzip.open(source, "rb") as unpacked, target.open("wb") as sink:
                shutil.copyfileobj(unpacked, sink)
        else:
            shutil.copyfile(source, target)
        restored.append(target)
    if restored:
        logger.info("restored %d kept file(s) from %s into %s", len(restored), keep_dir, run_root)
    return restored

"""A second home for the small files of finished runs, so an experiment survives a lost machine.

Long experiments (the RL ablation: hours per run on CPU) outlive the machine they started on. Their
checkpoints are too large to keep, but a *finished* run is fully described by a few small files
(its logged steps and held-out score and episodes), and those are all a report reads back. A keep
folder (typically under version control) holds copies of them in the run folder's layout:
:func:`keep` copies them there once a run is finished; :func:`restore` copies back whatever the run
folder lacks before anything is read, so a fresh machine resumes with the finished runs read back,
not retrained. Files already in the run folder are never overwritten (they are as new or newer).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path

__all__ = ["keep", "restore"]

logger = logging.getLogger(__name__)


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
        shutil.copyfile(path, target)


def restore(keep_dir: Path, run_root: Path) -> list[Path]:
    """Copy every file of ``keep_dir`` that ``run_root`` lacks back into it; the copies made."""
    if not keep_dir.is_dir():
        return []
    restored = []
    for source in sorted(keep_dir.rglob("*")):
        target = run_root / source.relative_to(keep_dir)
        if source.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            restored.append(target)
    if restored:
        logger.info("restored %d kept file(s) from %s into %s", len(restored), keep_dir, run_root)
    return restored

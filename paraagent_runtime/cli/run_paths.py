"""Default output paths under ``runs/`` that two commands started in the same second never share."""

from __future__ import annotations

import time
from pathlib import Path

__all__ = ["fresh_run_path"]


def fresh_run_path(name: str, *, suffix: str = "", directory: bool = False) -> Path:
    """Claim and return ``runs/<name>-<YYYYmmdd-HHMMSS>[-N]<suffix>``, a path no one else holds.

    The path is created (an empty folder with ``directory``, else an empty file) so that a
    second command started in the same second, e.g. two evaluations side by side, takes the next
    number instead of writing into the first one's trajectories. Where ``runs/`` cannot be
    written the first candidate is returned unclaimed, for the command's own check to report.
    """
    root = Path("runs")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = root / f"{name}-{stamp}{suffix}"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return path
    number = 1
    while True:
        try:
            if directory:
                path.mkdir()
            else:
                path.touch(exist_ok=False)
        except FileExistsError:
            number += 1
            path = root / f"{name}-{stamp}-{number}{suffix}"
        except OSError:
            return path
        else:
            return path

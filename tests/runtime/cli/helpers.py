"""Run the installed ``paraagent`` (or ``main`` in a fresh interpreter) as a user would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

PARAAGENT = Path(sys.executable).with_name("paraagent")

# A ``sys.meta_path`` finder that makes the named top-level modules look uninstalled.
BLOCKER = """
import sys
from importlib.abc import MetaPathFinder

class _Uninstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _Uninstalled())
"""


def run_cli(
    *argv: str, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed console script on ``argv`` (offline, no colour), ``env`` added."""
    return subprocess.run(
        [str(PARAAGENT), *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "NO_COLOR": "1",
            "COLUMNS": "100",
            **(env or {}),
        },
    )


def run_python(code: str, *, blocked: frozenset[str] = frozenset(), timeout: float = 60):
    """``code`` in a fresh interpreter, with the ``blocked`` modules made uninstallable."""
    prelude = BLOCKER.format(blocked=set(blocked)) if blocked else ""
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"},
    )


def default_sigint() -> None:
    """``preexec_fn`` for a child a test interrupts: SIGINT back to its default disposition.

    A test runner started in the background (``cmd &`` without job control, as some CI harnesses
    do) ignores SIGINT, and children inherit that; Python then never raises KeyboardInterrupt.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)

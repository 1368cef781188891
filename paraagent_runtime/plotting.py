"""Plots to files: matplotlib on its non-interactive backend, or one error naming the extra.

Every PNG the project draws (training curves, evaluation reports, retrieval scores, experiment
comparisons) gets its ``pyplot`` from :func:`pyplot` and writes through :func:`save_figure`, so
matplotlib is imported only when a plot is drawn and never opens a window.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import MissingExtraError

__all__ = ["pyplot", "save_figure"]


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend (draws to files; no display needed).

    Raises:
        MissingExtraError: matplotlib is not installed (the ``train`` and ``retrieval`` extras
            bring it).
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtraError(
            "plotting needs matplotlib: pip install 'paraagent[train]'", extra="train"
        ) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure: Any, path: str | Path, *, dpi: int = 100) -> Path:
    """Write ``figure`` to ``path`` (its folder created) and close it.

    Args:
        figure: A matplotlib figure.
        path: The image file; the suffix picks the format.
        dpi: Resolution of the image.

    Returns:
        The path written.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=dpi)
    pyplot().close(figure)
    return target

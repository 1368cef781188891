"""The RL stage: an explicit group-relative trainer over the runtime's agent loop.

The public names load lazily, so ``paraagent --help`` does not import torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import RLConfig
    from .plot import plot_curves
    from .trainer import RLTrainer

__all__ = ["RLConfig", "RLTrainer", "plot_curves"]

_HOMES = {"RLConfig": ".config", "RLTrainer": ".trainer", "plot_curves": ".plot"}


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name], __name__), name)

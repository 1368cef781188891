"""The RL stage: an explicit group-relative trainer over the runtime's agent loop."""

from __future__ import annotations

from .config import RLConfig
from .plot import plot_curves
from .trainer import RLTrainer

__all__ = ["RLConfig", "RLTrainer", "plot_curves"]

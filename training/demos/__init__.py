"""Multi-agent cold-start demonstrations, linearized into single-agent ParaAct trajectories."""

from __future__ import annotations

from .config import DemoConfig
from .dataset import Demo, DemoBuild, balance, build_demos, load_demos, run_demos
from .demonstrator import DemonstratorPolicy, Roles, demonstrate
from .filters import (
    FilterLimits,
    FilterVerdict,
    dependent_calls,
    filter_trajectory,
    irrelevant_calls,
)
from .roles import DemoAbort, DemoState, Executor, Explorer, Plan, Planner, RoleAction, Verifier

__all__ = [
    "Demo",
    "DemoAbort",
    "DemoBuild",
    "DemoConfig",
    "DemoState",
    "DemonstratorPolicy",
    "Executor",
    "Explorer",
    "FilterLimits",
    "FilterVerdict",
    "Plan",
    "Planner",
    "RoleAction",
    "Roles",
    "Verifier",
    "balance",
    "build_demos",
    "demonstrate",
    "dependent_calls",
    "filter_trajectory",
    "irrelevant_calls",
    "load_demos",
    "run_demos",
]

"""Agent modes and default turn budgets: the one home of both.

The modes share one loop (see :class:`paraagent_runtime.AgentConfig`): ``paraact`` (parallel
explore and execute turns, the default), ``react`` (one call per turn, no phases) and
``decoupled`` (explore until done, then execute, never back), the paper's baselines.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from .errors import ConfigError

__all__ = [
    "DEFAULT_MAX_REPEATED_TURNS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODE",
    "DEFAULT_TURN_TOKENS",
    "DEMO_MAX_TURNS",
    "MODES",
    "AgentMode",
    "check_max_repeated_turns",
]

AgentMode = Literal["paraact", "react", "decoupled"]
"""How the agent loop uses its turns (see the module docstring)."""

MODES: Final[tuple[AgentMode, ...]] = get_args(AgentMode)
"""Every agent mode, default first."""

DEFAULT_MODE: Final[AgentMode] = "paraact"
"""The mode of every entry point that is not told otherwise."""

DEFAULT_MAX_TURNS: Final = 12
"""Turns before an episode ends with status ``max_turns``, for every entry point.

The oracle needs at most 11 (react, ``trip_briefing``) on the built-in families, so ToolEnv's
oracle evaluation is the same at this budget as at any larger one. Shipped evaluations of the
135M policy ran at 6 turns (RL configs and ``train eval --max-turns 6``) or 8 (the mode
comparison); their commands name the budget.
"""

DEFAULT_MAX_REPEATED_TURNS: Final = 3
"""Turns in a row with the same calls and the same results that end an episode (``repeating``).

Chosen on dev replays of recorded episodes (``docs/results/repetition_guard.md``): no success
lost at any limit, and 3 still allows one repeat (a retry answered the same way). 0 never stops.
"""


def check_max_repeated_turns(value: int) -> int:
    """``value`` as a repetition limit: 0 (never stop) or at least 2.

    Raises:
        ConfigError: 1 (one turn cannot repeat anything: it would stop every episode at its
            first call) or a negative number.
    """
    if value == 1 or value < 0:
        raise ConfigError(f"must be 0 (never stop) or at least 2, got {value}")
    return value


DEFAULT_TURN_TOKENS: Final = 384
"""Tokens one model turn may generate in ``paraagent run`` and ``paraagent eval toolenv``."""

DEMO_MAX_TURNS: Final = 14
"""Turns for a demonstration episode: the longest demo the filters keep.

A react demo of a 5-tool task may take 5 search turns, 5 call turns and 3 turns of slack
(``turn_slack``, e.g. a recovered failure) before its answer turn.
"""

"""The options every ``paraagent`` command shares: one flag, one meaning, one spelling.

Each function returns a :func:`typer.Option` with the canonical flag names (and its range);
the ``help`` argument only says what the option does in that command. Commands annotate
their parameters with them, e.g. ``seed: Annotated[int, options.seed("ToolEnv world seed.")] = 0``.
This module is the one home of those flags: the command modules of other packages
(``training.cli``, ``training.rl.cli``, ``mcp_servers.toolenv.catalog.cli``) import it too, the one
part of the composition root they may import (``tests/test_architecture.py``; library modules may
not). ``tests/runtime/cli/test_options.py`` checks that no command spells a shared flag itself.
Importing this module costs typer and :mod:`paraagent_runtime.modes` only, so every ``--help``
stays fast.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer

from .. import modes as _modes

__all__ = [
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODE",
    "MODE_NAMES",
    "ModeChoice",
    "base_url",
    "max_tokens",
    "max_turns",
    "mode",
    "modes",
    "n_tasks",
    "out",
    "policy",
    "seed",
    "temperature",
]

MODE_NAMES: tuple[str, ...] = _modes.MODES
"""The agent modes, default first."""

ModeChoice = StrEnum("ModeChoice", {name: name for name in MODE_NAMES})
"""The agent modes as a typer choice (members compare equal to their names)."""

DEFAULT_MODE = ModeChoice(_modes.DEFAULT_MODE)
"""The mode a command runs in unless told otherwise, as a choice."""

DEFAULT_MAX_TURNS: int = _modes.DEFAULT_MAX_TURNS
"""The turn budget of an episode unless told otherwise."""

POLICY_HELP = (
    'Policy spec: "paraagent" (ParaAgent-135M, offline), "local[:DIR]" (SmolLM2-135M, or a model '
    'or LoRA adapter directory), "openai:MODEL" (with --base-url), "vllm:MODEL", '
    '"scripted:FILE.jsonl".'
)


def policy(help: str = POLICY_HELP) -> Any:
    """``--policy/-p SPEC``: which policy answers (a :func:`policy_from_spec` spec)."""
    return typer.Option("--policy", "-p", help=help, metavar="SPEC")


def base_url(
    help: str = "OpenAI-compatible server of an openai:MODEL policy, e.g. http://127.0.0.1:8000/v1.",
) -> Any:
    """``--base-url URL``: the server an ``openai:MODEL`` policy talks to."""
    return typer.Option("--base-url", help=help, metavar="URL")


def mode(help: str = "Agent mode.") -> Any:
    """``--mode/-m``: one agent mode, a choice of :data:`MODE_NAMES`."""
    return typer.Option("--mode", "-m", help=help, case_sensitive=False)


def modes(help: str) -> Any:
    """``--mode/-m`` repeated: several agent modes (validated by the command)."""
    return typer.Option("--mode", "-m", help=help)


def max_turns(help: str = "Turns before an episode gives up.") -> Any:
    """``--max-turns N``: the turn budget of an episode (at least 1)."""
    return typer.Option("--max-turns", min=1, help=help)


def max_tokens(help: str = "Tokens per model turn.") -> Any:
    """``--max-tokens N``: new tokens per model turn (at least 1)."""
    return typer.Option("--max-tokens", min=1, help=help)


def temperature(help: str = "Sampling temperature (0 = greedy).") -> Any:
    """``--temperature T``: the sampling temperature (0 or more)."""
    return typer.Option("--temperature", min=0.0, help=help)


def n_tasks(help: str = "Number of tasks.") -> Any:
    """``--n-tasks N``: how many tasks (at least 1)."""
    return typer.Option("--n-tasks", min=1, help=help)


def seed(help: str = "Random seed.") -> Any:
    """``--seed N``: the seed of the task generator or world."""
    return typer.Option("--seed", help=help)


def out(help: str) -> Any:
    """``--out/-o PATH``: where the command writes its trajectories or results."""
    return typer.Option("--out", "-o", help=help)

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
from typing import TYPE_CHECKING, Any

import typer

from .. import modes as _modes
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..dispatch import DispatchConfig

__all__ = [
    "DEFAULT_MAX_REPEATED_TURNS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODE",
    "DEFAULT_TURN_TOKENS",
    "MODE_NAMES",
    "ModeChoice",
    "base_url",
    "call_timeout",
    "dispatch_limits",
    "max_calls_per_turn",
    "max_concurrency",
    "max_repeated_turns",
    "max_tokens",
    "max_turns",
    "mcp_config",
    "mode",
    "modes",
    "n_tasks",
    "out",
    "per_source_concurrency",
    "policy",
    "prefetch_tools",
    "seed",
    "temperature",
    "toolenv",
]

MODE_NAMES: tuple[str, ...] = _modes.MODES
"""The agent modes, default first."""

ModeChoice = StrEnum("ModeChoice", {name: name for name in MODE_NAMES})
"""The agent modes as a typer choice (members compare equal to their names)."""

DEFAULT_MODE = ModeChoice(_modes.DEFAULT_MODE)
"""The mode a command runs in unless told otherwise, as a choice."""

DEFAULT_MAX_TURNS: int = _modes.DEFAULT_MAX_TURNS
"""The turn budget of an episode unless told otherwise."""

DEFAULT_MAX_REPEATED_TURNS: int = _modes.DEFAULT_MAX_REPEATED_TURNS
"""Identical turns in a row that end an episode unless told otherwise."""

DEFAULT_TURN_TOKENS: int = _modes.DEFAULT_TURN_TOKENS
"""The token budget of a model turn unless told otherwise."""

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


def mcp_config(
    help: str = (
        "MCP config (mcpServers or VS Code servers JSON): its servers are the tools "
        "(default ./.mcp.json if present, else the built-in ToolEnv)."
    ),
) -> Any:
    """``--mcp-config FILE``: the user's MCP servers (the rule: :mod:`.tool_sources`)."""
    return typer.Option("--mcp-config", help=help, metavar="FILE")


def toolenv(
    help: str = (
        "Add the built-in ToolEnv (simulated tools) to the MCP servers; --no-toolenv: never "
        "(default: only when there is no MCP config)."
    ),
) -> Any:
    """``--toolenv/--no-toolenv``: whether the simulated ToolEnv tools join (None: the rule)."""
    return typer.Option("--toolenv/--no-toolenv", help=help)


def mode(help: str = "Agent mode.") -> Any:
    """``--mode/-m``: one agent mode, a choice of :data:`MODE_NAMES`."""
    return typer.Option("--mode", "-m", help=help, case_sensitive=False)


def modes(help: str) -> Any:
    """``--mode/-m`` repeated: several agent modes (validated by the command)."""
    return typer.Option("--mode", "-m", help=help)


def max_turns(help: str = "Turns before an episode gives up.") -> Any:
    """``--max-turns N``: the turn budget of an episode (at least 1)."""
    return typer.Option("--max-turns", min=1, help=help)


def max_repeated_turns(
    help: str = (
        "End an episode (status 'repeating') after N turns in a row with the same calls and "
        "the same results; 0: never."
    ),
) -> Any:
    """``--max-repeated-turns N``: the repetition guard of an episode (0, or at least 2)."""
    return typer.Option(
        "--max-repeated-turns", min=0, help=help, callback=_check_repeated_turns, metavar="N"
    )


def _check_repeated_turns(value: int) -> int:
    try:
        return _modes.check_max_repeated_turns(value)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


def max_tokens(help: str = "Tokens per model turn.") -> Any:
    """``--max-tokens N``: new tokens per model turn (at least 1)."""
    return typer.Option("--max-tokens", min=1, help=help)


def temperature(help: str = "Sampling temperature (0 = greedy).") -> Any:
    """``--temperature T``: the sampling temperature (0 or more)."""
    return typer.Option("--temperature", min=0.0, help=help)


def prefetch_tools(
    help: str = (
        "Load the N tools that best match each task's text before its first turn (retrieval "
        "on the whole request; search_tools stays available; 0: none)."
    ),
) -> Any:
    """``--prefetch-tools N``: tools loaded from the task's text before the first turn (0: none)."""
    return typer.Option("--prefetch-tools", min=0, metavar="N", help=help)


def n_tasks(help: str = "Number of tasks.") -> Any:
    """``--n-tasks N``: how many tasks (at least 1)."""
    return typer.Option("--n-tasks", min=1, help=help)


# The dispatch limits (DispatchConfig): None leaves the library's default, which --help names.
def max_calls_per_turn(
    help: str = (
        "Tool calls run per model turn; later ones get too_many_calls [default: 8]. Raises "
        "--max-concurrency and --per-source-concurrency to match unless they are given."
    ),
) -> Any:
    """``--max-calls-per-turn N``: K_max, the calls of one turn that run (at least 1)."""
    return typer.Option("--max-calls-per-turn", min=1, help=help, metavar="N")


def max_concurrency(
    help: str = "Tool calls running at once over all sources [default: 64].",
) -> Any:
    """``--max-concurrency N``: calls in flight over every source (at least 1)."""
    return typer.Option("--max-concurrency", min=1, help=help, metavar="N")


def per_source_concurrency(
    help: str = "Tool calls running at once on one source (MCP server) [default: 16].",
) -> Any:
    """``--per-source-concurrency N``: calls in flight on one source (at least 1)."""
    return typer.Option("--per-source-concurrency", min=1, help=help, metavar="N")


def call_timeout(help: str = "Seconds one tool call may run [default: 30].") -> Any:
    """``--call-timeout SECONDS``: the limit of one attempt of one call (above 0)."""
    return typer.Option("--call-timeout", min=0.001, help=help, metavar="SECONDS")


def dispatch_limits(
    max_calls_per_turn: int | None = None,
    max_concurrency: int | None = None,
    per_source_concurrency: int | None = None,
    call_timeout: float | None = None,
) -> DispatchConfig:
    """The dispatch config of the four limit flags; a flag not given keeps the default.

    A turn's calls all run at once unless a concurrency flag says otherwise: with only
    ``--max-calls-per-turn 64``, 64 calls do not queue behind the default 16 per source.
    """
    from ..dispatch import DispatchConfig

    default = DispatchConfig()
    turn = max_calls_per_turn or default.max_calls_per_turn
    return DispatchConfig(
        max_calls_per_turn=turn,
        max_concurrency=max_concurrency or max(default.max_concurrency, turn),
        per_source_concurrency=per_source_concurrency or max(default.per_source_concurrency, turn),
        call_timeout_s=call_timeout or default.call_timeout_s,
    )


def seed(help: str = "Random seed.") -> Any:
    """``--seed N``: the seed of the task generator or world (0 or more, as numpy needs)."""
    return typer.Option("--seed", min=0, help=help)


def out(help: str) -> Any:
    """``--out/-o PATH``: where the command writes its trajectories or results."""
    return typer.Option("--out", "-o", help=help)

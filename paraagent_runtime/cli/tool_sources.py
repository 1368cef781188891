"""Which tools a command runs with: the user's MCP servers or the built-in ToolEnv, never mixed in.

The rule ``run``, ``chat`` and ``serve`` share:

- ``--mcp-config FILE``: the servers of FILE are the tools;
- no ``--mcp-config``: ``./.mcp.json`` (Claude Code's project file) when the current folder has
  one, else the built-in ToolEnv (the simulator);
- ``--toolenv`` adds ToolEnv to the servers of a config; ``--no-toolenv`` keeps it out.

Each command says on stderr, in one line, which tools it uses. Source names are the user's: a
server named like a ToolEnv provider (``time``, ``weather``, …) only collides with ``--toolenv``,
and then the error names both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import ConfigError, UserError

if TYPE_CHECKING:  # `chat --help` and `serve --help` import this module: keep it light
    from ..sources import ToolSource

__all__ = [
    "PROJECT_CONFIG",
    "ToolChoice",
    "announce",
    "check_names",
    "choose_tools",
    "toolenv_sources",
]

PROJECT_CONFIG = ".mcp.json"
"""The project's MCP config, looked up in the current folder when none is given."""


@dataclass(frozen=True)
class ToolChoice:
    """The tool sources a command runs with.

    Attributes:
        mcp_config: The MCP config whose servers are the tools, if any.
        toolenv: Whether the built-in ToolEnv is part of the tools.
        discovered: Whether ``mcp_config`` is ``./.mcp.json``, found rather than given.
    """

    mcp_config: Path | None
    toolenv: bool
    discovered: bool = False

    def describe(self) -> str:
        """One line saying which tools these are."""
        if self.mcp_config is None:
            return (
                f"tools: the built-in ToolEnv (simulated; no --mcp-config, no ./{PROJECT_CONFIG})"
            )
        found = (
            f" (found ./{PROJECT_CONFIG}; --mcp-config FILE to choose)" if self.discovered else ""
        )
        added = " + the built-in ToolEnv (simulated)" if self.toolenv else ""
        return f"tools: the MCP servers of {self.mcp_config}{added}{found}"


def choose_tools(
    mcp_config: Path | None, toolenv: bool | None, *, cwd: Path | None = None
) -> ToolChoice:
    """Apply the tool-source rule (module docstring) to a command's flags.

    Args:
        mcp_config: ``--mcp-config``, if given.
        toolenv: ``--toolenv`` (True), ``--no-toolenv`` (False) or neither (None).
        cwd: Where ``./.mcp.json`` is looked for (default: the current folder).

    Raises:
        UserError: ``--no-toolenv`` without any MCP config: there would be no tools.
    """
    discovered = False
    if mcp_config is None:
        candidate = Path(PROJECT_CONFIG) if cwd is None else cwd / PROJECT_CONFIG
        if candidate.is_file():
            mcp_config, discovered = candidate, True
    if mcp_config is None:
        if toolenv is False:
            raise UserError(
                f"no tools: --no-toolenv without --mcp-config FILE (and no ./{PROJECT_CONFIG})"
            )
        return ToolChoice(None, toolenv=True)
    return ToolChoice(mcp_config, toolenv=bool(toolenv), discovered=discovered)


def toolenv_sources(choice: ToolChoice, *, seed: int = 0) -> list[ToolSource]:
    """The built-in ToolEnv's sources (in the world of ``seed``) when the choice includes it."""
    if not choice.toolenv:
        return []
    from mcp_servers.toolenv import ToolEnv

    return list(ToolEnv.builtin(seed=seed).sources)


def announce(choice: ToolChoice) -> None:
    """Say on stderr which tools the command uses (one line)."""
    typer.echo(choice.describe(), err=True)


def check_names(choice: ToolChoice, servers: Iterable[str], toolenv: Sequence[ToolSource]) -> None:
    """Refuse a server named like a ToolEnv provider when both are loaded, naming both.

    Args:
        choice: The chosen tools.
        servers: The names of the servers of ``choice.mcp_config``.
        toolenv: The ToolEnv sources that join them (none: nothing to check).

    Raises:
        ConfigError: A server has a ToolEnv provider's name.
    """
    builtin = {source.name for source in toolenv}
    for name in servers:
        if name in builtin:
            raise ConfigError(
                f"{choice.mcp_config}: server {name!r} and the built-in ToolEnv provider "
                f"{name!r} have one name: rename the server to use both, or drop --toolenv"
            )

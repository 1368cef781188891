"""``paraagent chat``: the Textual UI (:mod:`tui`) wired to ToolEnv, MCP servers and a policy."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from . import options

if TYPE_CHECKING:
    from ..policy import Policy
    from ..sources import ToolSource
    from ..toolspace import Toolspace

__all__ = ["chat_command"]


def _policy_factory(base_url: str | None) -> Callable[[str], Policy]:
    from ..policy import policy_from_spec

    def build(spec: str) -> Policy:
        return policy_from_spec(spec, base_url=base_url)

    return build


def _toolspace(mcp_config: Path | None, toolenv: list[ToolSource]) -> Toolspace:
    from ..search import default_tool_search, index_scope
    from ..toolspace import Toolspace

    if mcp_config is None:
        return Toolspace(toolenv, search=default_tool_search(index_scope(None)))
    from ..mcp import mcp_toolspace

    search = default_tool_search(index_scope(mcp_config, with_builtin=bool(toolenv)))
    toolspace = mcp_toolspace(mcp_config, search=search)

    async def add() -> None:
        for source in toolenv:
            await toolspace.add_source(source)

    asyncio.run(add())
    return toolspace


def chat_command(
    mcp_config: Annotated[
        Path | None,
        typer.Option("--mcp-config", help="mcpServers JSON: chat with these servers' tools too."),
    ] = None,
    policy: Annotated[
        str, options.policy(f"{options.POLICY_HELP} /model SPEC switches it in the chat.")
    ] = "paraagent",
    base_url: Annotated[str | None, options.base_url()] = None,
    mode: Annotated[options.ModeChoice, options.mode()] = options.DEFAULT_MODE,
    max_turns: Annotated[int, options.max_turns("Turns before a task gives up.")] = (
        options.DEFAULT_MAX_TURNS
    ),
    seed: Annotated[int, options.seed("ToolEnv world seed.")] = 0,
    toolenv: Annotated[
        bool, typer.Option("--toolenv/--no-toolenv", help="Include the built-in ToolEnv tools.")
    ] = True,
    history_dir: Annotated[
        Path | None,
        typer.Option(
            "--history-dir",
            help="Where conversations are kept (default ~/.local/share/paraagent/history).",
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Reopen the latest conversation.")
    ] = False,
    light: Annotated[bool, typer.Option("--light", help="Start with the light theme.")] = False,
) -> None:
    """Chat with the agent in a terminal UI: phases, parallel calls and their results, live."""
    # First, so that a missing `tui` extra is reported before a model loads.
    from tui.app import run_chat

    from ..agent import AgentConfig
    from ..errors import UserError

    sources: list[ToolSource] = []
    if toolenv:
        from mcp_servers.toolenv import ToolEnv

        sources = list(ToolEnv.builtin(seed=seed).sources)
    if not sources and mcp_config is None:
        raise UserError("no tools: drop --no-toolenv or give --mcp-config FILE")
    build_policy = _policy_factory(base_url)
    run_chat(
        policy=build_policy(policy),
        toolspace=_toolspace(mcp_config, sources),
        agent_config=AgentConfig(mode=mode.value, max_turns=max_turns),  # type: ignore[arg-type]
        history_dir=history_dir,
        resume=resume,
        policy_factory=build_policy,
        dark=not light,
    )

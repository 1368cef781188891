"""``paraagent chat``: the Textual UI (:mod:`tui`) wired to the chosen tools and a policy.

The tools follow :mod:`.tool_sources`: the user's MCP servers, or the built-in ToolEnv.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from . import options
from .tool_sources import ToolChoice, announce, check_names, choose_tools, toolenv_sources

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


def _toolspace(choice: ToolChoice, toolenv: list[ToolSource]) -> Toolspace:
    from ..search import default_tool_search, index_scope
    from ..toolspace import Toolspace

    search = default_tool_search(index_scope(choice.mcp_config, with_builtin=choice.toolenv))
    if choice.mcp_config is None:
        return Toolspace(toolenv, search=search)
    from ..mcp import mcp_toolspace

    toolspace = mcp_toolspace(choice.mcp_config, search=search)
    check_names(choice, toolspace.sources, toolenv)

    async def add() -> None:
        for source in toolenv:
            await toolspace.add_source(source)

    asyncio.run(add())
    return toolspace


def chat_command(
    mcp_config: Annotated[Path | None, options.mcp_config()] = None,
    policy: Annotated[
        str, options.policy(f"{options.POLICY_HELP} /model SPEC switches it in the chat.")
    ] = "paraagent",
    base_url: Annotated[str | None, options.base_url()] = None,
    mode: Annotated[options.ModeChoice, options.mode()] = options.DEFAULT_MODE,
    max_turns: Annotated[int, options.max_turns("Turns before a task gives up.")] = (
        options.DEFAULT_MAX_TURNS
    ),
    prefetch_tools: Annotated[int, options.prefetch_tools()] = 0,
    seed: Annotated[int, options.seed("ToolEnv world seed.")] = 0,
    toolenv: Annotated[bool | None, options.toolenv()] = None,
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
    max_calls_per_turn: Annotated[int | None, options.max_calls_per_turn()] = None,
    max_concurrency: Annotated[int | None, options.max_concurrency()] = None,
    per_source_concurrency: Annotated[int | None, options.per_source_concurrency()] = None,
    call_timeout: Annotated[float | None, options.call_timeout()] = None,
) -> None:
    """Chat with the agent in a terminal UI: phases, parallel calls and their results, live."""
    # First, so that a missing `tui` extra is reported before a model loads.
    from tui.app import run_chat

    from ..agent import AgentConfig
    from .output import default_model_notice

    choice = choose_tools(mcp_config, toolenv)
    sources = toolenv_sources(choice, seed=seed)
    toolspace = _toolspace(choice, sources)
    announce(choice)
    build_policy = _policy_factory(base_url)
    run_chat(
        policy=build_policy(policy),
        toolspace=toolspace,
        agent_config=AgentConfig(
            mode=mode.value,  # type: ignore[arg-type]
            max_turns=max_turns,
            prefetch_tools=prefetch_tools,
            dispatch=options.dispatch_limits(
                max_calls_per_turn, max_concurrency, per_source_concurrency, call_timeout
            ),
        ),
        history_dir=history_dir,
        resume=resume,
        policy_factory=build_policy,
        dark=not light,
        notice=default_model_notice(policy),
    )

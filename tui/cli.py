"""``paraagent chat``: the typer command the main CLI mounts (wires ToolEnv, MCP and a policy)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from paraagent_runtime.agent import AgentConfig
from paraagent_runtime.errors import UserError
from paraagent_runtime.policy import policy_from_spec
from paraagent_runtime.policy.base import Policy
from paraagent_runtime.search import default_tool_search, index_scope
from paraagent_runtime.sources import ToolSource
from paraagent_runtime.toolspace import Toolspace

__all__ = ["chat_command", "policy_spec"]


def policy_spec(*, policy: str | None, model: str | None, base_url: str | None) -> str:
    """The policy spec the options mean.

    ``--policy`` wins; ``--model`` with ``--base-url`` is a model on an OpenAI-compatible server,
    ``--model`` alone a local model (or a full spec when it has a colon); nothing means
    ``paraagent``.
    """
    if policy:
        return policy
    if model:
        if ":" in model:
            return model
        return f"openai:{model}" if base_url else f"local:{model}"
    return "paraagent"


def _policy_factory(base_url: str | None):  # noqa: ANN202 - a PolicyFactory
    def build(name: str) -> Policy:
        kwargs = {"base_url": base_url} if base_url else {}
        return policy_from_spec(policy_spec(policy=None, model=name, base_url=base_url), **kwargs)

    return build


def _toolspace(mcp_config: Path | None, toolenv: list[ToolSource]) -> Toolspace:
    if mcp_config is None:
        return Toolspace(toolenv, search=default_tool_search(index_scope(None)))
    from paraagent_runtime.mcp.cli import mcp_toolspace

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
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="Model name on --base-url (or a local model path without it)."
        ),
    ] = None,
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy",
            "-p",
            help='Policy spec ("local", "openai:MODEL", "scripted:FILE.jsonl"); overrides --model.',
        ),
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="Agent mode: paraact, react or decoupled.")
    ] = "paraact",
    max_turns: Annotated[int, typer.Option(help="Turns before a task gives up.")] = 12,
    seed: Annotated[int, typer.Option(help="ToolEnv world seed.")] = 0,
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
    if mode not in ("paraact", "react", "decoupled"):
        raise typer.BadParameter(
            f"unknown mode {mode!r} (use paraact, react or decoupled)", param_hint="--mode"
        )
    sources: list[ToolSource] = []
    if toolenv:
        from mcp_servers.toolenv import ToolEnv

        sources = list(ToolEnv.builtin(seed=seed).sources)
    if not sources and mcp_config is None:
        raise UserError("no tools: drop --no-toolenv or give --mcp-config FILE")
    kwargs = {"base_url": base_url} if base_url else {}
    chosen = policy_from_spec(policy_spec(policy=policy, model=model, base_url=base_url), **kwargs)
    from .app import run_chat

    run_chat(
        policy=chosen,
        toolspace=_toolspace(mcp_config, sources),
        agent_config=AgentConfig(mode=mode, max_turns=max_turns),  # type: ignore[arg-type]
        history_dir=history_dir,
        resume=resume,
        policy_factory=_policy_factory(base_url),
        dark=not light,
    )

"""``paraagent serve``: paraagent as an MCP server in front of the chosen tools.

The tools follow :mod:`.tool_sources`: the servers of an MCP config, or the built-in ToolEnv.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from . import options

__all__ = ["Transport", "serve_command"]


class Transport(StrEnum):
    """How ``paraagent serve`` talks to its MCP client."""

    stdio = "stdio"
    http = "http"


def serve_command(
    mcp_config: Annotated[Path | None, options.mcp_config()] = None,
    toolenv: Annotated[bool | None, options.toolenv()] = None,
    transport: Annotated[
        Transport, typer.Option("--transport", "-t", help="How MCP clients connect.")
    ] = Transport.stdio,
    host: Annotated[
        str, typer.Option(help="HTTP bind address (non-loopback needs --token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            help="Bearer token required on every HTTP request.", envvar="PARAAGENT_SERVE_TOKEN"
        ),
    ] = None,
    policy: Annotated[
        str | None, options.policy("Policy spec of run_task; omit for the gateway only.")
    ] = None,
    base_url: Annotated[str | None, options.base_url()] = None,
    mode: Annotated[options.ModeChoice, options.mode("Default agent mode of run_task.")] = (
        options.DEFAULT_MODE
    ),
    max_turns: Annotated[int, options.max_turns("Default turn budget of run_task.")] = (
        options.DEFAULT_MAX_TURNS
    ),
    gateway: Annotated[
        bool, typer.Option("--gateway/--no-gateway", help="Expose search_tools + call_tool.")
    ] = True,
    max_calls_per_turn: Annotated[int | None, options.max_calls_per_turn()] = None,
    max_concurrency: Annotated[int | None, options.max_concurrency()] = None,
    per_source_concurrency: Annotated[int | None, options.per_source_concurrency()] = None,
    call_timeout: Annotated[float | None, options.call_timeout()] = None,
    max_result_chars: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Longest call_tool result passed on, in characters of text and base64 "
            "(default: the agent's result limit); longer ones are cut with a marker.",
        ),
    ] = None,
) -> None:
    """Serve paraagent (run_task and the search_tools/call_tool gateway) over stdio or HTTP.

    It answers at once: servers connect and the tool index builds in the background, tools
    appear through notifications/tools/list_changed, and a server that fails is retried. On
    stderr it says which tools it fronts, where it answers, with which policy, and how many
    sources and tools are ready once every server had its first attempt.
    """
    import asyncio
    import dataclasses
    import gc

    from .tool_sources import announce, check_names, choose_tools, toolenv_sources

    # A host waits for these imports (the MCP SDK and ToolEnv build thousands of pydantic
    # models and dataclasses): garbage collections during them free nothing and cost ~8%, and
    # once frozen, what they built is never scanned again (no long first collection later).
    gc.disable()
    try:
        from ..mcp.server import check_bind
        from ..mcp.serving import serve_mcp_config

        if transport is Transport.http:
            check_bind(host, token or None)  # before any work: refusing should be instant
        dispatch = options.dispatch_limits(
            max_calls_per_turn, max_concurrency, per_source_concurrency, call_timeout
        )
        if max_result_chars is not None:
            dispatch = dataclasses.replace(dispatch, max_result_chars=max_result_chars)
        choice = choose_tools(mcp_config, toolenv)
        sources = toolenv_sources(choice)
    finally:
        gc.freeze()
        gc.enable()
    config = None
    if choice.mcp_config is not None:
        from ..mcp import load_mcp_config

        # A broken file is one error line, before any work; read once (it may be a pipe).
        config = load_mcp_config(choice.mcp_config)
        check_names(choice, config.enabled(), sources)
    announce(choice)
    asyncio.run(
        serve_mcp_config(
            choice.mcp_config,
            config=config,
            sources=sources,
            policy_spec=policy,
            base_url=base_url,
            mode=mode.value,  # type: ignore[arg-type]
            max_turns=max_turns,
            transport=transport.value,  # type: ignore[arg-type]
            host=host,
            port=port,
            token=token or None,
            gateway=gateway,
            dispatch=dispatch,
            announce=lambda line: typer.echo(line, err=True),
        )
    )

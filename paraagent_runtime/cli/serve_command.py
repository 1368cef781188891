"""``paraagent serve``: paraagent as an MCP server in front of the servers of an MCP config."""

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
    mcp_config: Annotated[
        Path, typer.Option("--mcp-config", help="mcpServers JSON: the servers to front.")
    ],
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
) -> None:
    """Serve paraagent (run_task and the search_tools/call_tool gateway) over stdio or HTTP."""
    import asyncio

    from ..mcp.serving import serve_mcp_config

    asyncio.run(
        serve_mcp_config(
            mcp_config,
            policy_spec=policy,
            base_url=base_url,
            mode=mode.value,  # type: ignore[arg-type]
            max_turns=max_turns,
            transport=transport.value,  # type: ignore[arg-type]
            host=host,
            port=port,
            token=token or None,
            gateway=gateway,
        )
    )

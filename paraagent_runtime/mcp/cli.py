"""``paraagent serve``: a typer sub-app the main CLI mounts, and the toolspace wiring it uses."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, Literal

import typer

from ..agent import AgentConfig
from ..errors import ParaAgentError
from ..search import ToolSearch, default_tool_search, index_scope
from ..toolspace import Toolspace
from .server import build_paraagent_server, serve
from .source import load_mcp_sources

__all__ = ["mcp_toolspace", "serve_app"]

serve_app = typer.Typer(add_completion=False, help="Serve paraagent as an MCP server.")


def mcp_toolspace(
    path: str | Path, *, search: ToolSearch | None = None, preload_threshold: int = 32
) -> Toolspace:
    """A toolspace over the enabled servers of an MCP config file.

    A server's ``tools/list_changed`` refreshes the toolspace (and so its search index). Call
    ``await toolspace.refresh()`` before the first use.

    Raises:
        ConfigError: The file cannot be used (the message names the field).
    """
    holder: list[Toolspace] = []

    async def refresh(_source: str) -> None:
        await holder[0].refresh()

    toolspace = Toolspace(
        load_mcp_sources(path, on_tools_changed=refresh),
        search=search,
        preload_threshold=preload_threshold,
    )
    holder.append(toolspace)
    return toolspace


async def _serve(
    mcp_config: Path,
    *,
    policy_spec: str | None,
    base_url: str | None,
    mode: Literal["paraact", "react", "decoupled"],
    max_turns: int,
    transport: Literal["stdio", "http"],
    host: str,
    port: int,
    token: str | None,
    gateway: bool,
) -> None:
    toolspace = mcp_toolspace(
        mcp_config, search=default_tool_search(index_scope(mcp_config, with_builtin=False))
    )
    try:
        await toolspace.refresh()
        policy = None
        if policy_spec:
            from ..policy import policy_from_spec

            kwargs = {"base_url": base_url} if base_url else {}
            policy = policy_from_spec(policy_spec, **kwargs)
        server = build_paraagent_server(
            toolspace,
            policy=policy,
            agent_config=AgentConfig(mode=mode, max_turns=max_turns),
            gateway=gateway,
        )
        await serve(server, transport=transport, host=host, port=port, token=token)
    finally:
        await toolspace.aclose()


@serve_app.command("serve")
def serve_command(
    mcp_config: Annotated[
        Path, typer.Option("--mcp-config", help="mcpServers JSON: the servers to front.")
    ],
    transport: Annotated[str, typer.Option("--transport", "-t", help="stdio or http.")] = "stdio",
    host: Annotated[
        str, typer.Option(help="HTTP bind address (non-loopback needs --token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            help="Bearer token required on every HTTP request.", envvar="PARAAGENT_SERVE_TOKEN"
        ),
    ] = None,
    policy: Annotated[
        str | None,
        typer.Option("--policy", "-p", help="Policy spec for run_task; omit for the gateway only."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.")
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="Default agent mode of run_task.")
    ] = "paraact",
    max_turns: Annotated[int, typer.Option(help="Default turn budget of run_task.")] = 12,
    gateway: Annotated[
        bool, typer.Option("--gateway/--no-gateway", help="Expose search_tools + call_tool.")
    ] = True,
) -> None:
    """Serve paraagent (run_task and the search_tools/call_tool gateway) over stdio or HTTP."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(
            f"unknown transport {transport!r} (use stdio or http)", param_hint="--transport"
        )
    if mode not in ("paraact", "react", "decoupled"):
        raise typer.BadParameter(f"unknown mode {mode!r}", param_hint="--mode")
    try:
        asyncio.run(
            _serve(
                mcp_config,
                policy_spec=policy,
                base_url=base_url,
                mode=mode,  # type: ignore[arg-type]
                max_turns=max_turns,
                transport=transport,  # type: ignore[arg-type]
                host=host,
                port=port,
                token=token or os.environ.get("PARAAGENT_SERVE_TOKEN") or None,
                gateway=gateway,
            )
        )
    except ParaAgentError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc

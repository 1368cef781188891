"""paraagent served in front of the servers of an MCP config: the library side of `serve`.

``serve`` answers its client at once: the bind address and token are checked and the policy spec
is read first (cheap, and a mistake stops it before anything starts), then the server runs while
its sources connect and the index builds in the background (:class:`~.startup.SourceStartup`:
failed servers are retried with back-off, every change is announced with
``notifications/tools/list_changed``) and the policy's model loads (``run_task`` waits for it,
reporting progress). The command itself lives in the composition root
(:mod:`paraagent_runtime.cli.serve_command`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import MCPServer

from ..agent import AgentConfig
from ..dispatch import DispatchConfig
from ..modes import AgentMode
from ..policy.base import Policy
from ..search import default_tool_search, index_scope
from ..sources import ToolSource
from ..toolspace import Toolspace
from .server import ModelLoad, ToolListAnnouncer, build_paraagent_server, check_bind, serve
from .source import MCPToolSource, ReconnectPolicy, load_mcp_sources
from .startup import SourceStartup

__all__ = ["running_server", "serve_mcp_config"]

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def running_server(
    toolspace: Toolspace,
    *,
    policy: Policy | None = None,
    agent_config: AgentConfig | None = None,
    gateway: bool = True,
    reconnect: ReconnectPolicy | None = None,
) -> AsyncIterator[MCPServer]:
    """The MCP server of paraagent over ``toolspace``, its start-up running in the background.

    Inside the block the sources start (each on its own, retried with back-off while they fail)
    and the policy's model loads; clients may connect at once. Leaving it stops the start-up;
    closing the toolspace is the caller's.

    Args:
        toolspace: The tools (not refreshed yet; its MCP sources announce their own changes here).
        policy: The model behind ``run_task``; ``None``: gateway only.
        agent_config: ``run_task``'s defaults; its dispatch limits cap gateway results too.
        gateway: Whether to expose ``search_tools`` and ``call_tool``.
        reconnect: The back-off between attempts of a failing source.

    Raises:
        ConfigError: Neither a policy nor the gateway is enabled.
    """
    announcer = ToolListAnnouncer()
    startup = SourceStartup(toolspace, reconnect=reconnect, on_change=announcer.announce)
    for source in toolspace.sources.values():
        if isinstance(source, MCPToolSource):
            source.on_tools_changed = startup.source_changed
    model_load = ModelLoad(policy) if policy is not None else None
    server = build_paraagent_server(
        toolspace,
        policy=policy,
        agent_config=agent_config,
        gateway=gateway,
        announcer=announcer,
        model_load=model_load,
        startup=startup,
    )
    if model_load is not None:
        model_load.start()
    starting = asyncio.create_task(startup.run())
    starting.add_done_callback(_log_startup_failure)
    try:
        yield server
    finally:
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await starting


def _log_startup_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("serve: starting the tool sources failed: %s", error)


async def serve_mcp_config(
    mcp_config: Path | None,
    *,
    sources: Sequence[ToolSource] = (),
    policy_spec: str | None,
    base_url: str | None,
    mode: AgentMode,
    max_turns: int,
    transport: Literal["stdio", "http"],
    host: str,
    port: int,
    token: str | None,
    gateway: bool,
    dispatch: DispatchConfig | None = None,
) -> None:
    """Serve paraagent over the servers of an MCP config (and/or other sources) until cancelled.

    Args:
        mcp_config: The ``mcpServers`` JSON whose servers paraagent fronts, if any.
        sources: More tool sources to front (the CLI's built-in ToolEnv).
        policy_spec: The policy of ``run_task`` (:func:`policy_from_spec`); ``None``: gateway only.
        base_url: The server of an ``openai:`` policy spec.
        mode: The default agent mode of ``run_task``.
        max_turns: The default turn budget of ``run_task``.
        transport: ``stdio`` or streamable ``http``.
        host: The HTTP bind address.
        port: The HTTP port.
        token: The bearer token HTTP requests must carry.
        gateway: Whether to expose ``search_tools`` and ``call_tool``.
        dispatch: The dispatch limits of ``run_task`` and the cap of gateway results (default:
            :class:`DispatchConfig`).

    Raises:
        ParaAgentError: The bind address, the config or the policy spec cannot be used.
    """
    if transport == "http":
        check_bind(host, token)
    policy = None
    if policy_spec:
        from ..policy import policy_from_spec

        policy = policy_from_spec(policy_spec, base_url=base_url)
    servers = load_mcp_sources(mcp_config) if mcp_config is not None else []
    toolspace = Toolspace(
        [*servers, *sources],
        search=default_tool_search(index_scope(mcp_config, with_builtin=bool(sources))),
    )
    config = AgentConfig(mode=mode, max_turns=max_turns, dispatch=dispatch or DispatchConfig())
    try:
        async with running_server(
            toolspace, policy=policy, agent_config=config, gateway=gateway
        ) as server:
            await serve(server, transport=transport, host=host, port=port, token=token)
    finally:
        await toolspace.aclose()

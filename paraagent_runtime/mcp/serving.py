"""paraagent served in front of the servers of an MCP config: the library side of `serve`.

``serve`` answers its client at once: the bind address and token are checked and the policy spec
is read first (cheap, and a mistake stops it before anything starts), then the server runs while
its sources connect and the index builds in the background (:class:`~.startup.SourceStartup`:
failed servers are retried with back-off, every change is announced with
``notifications/tools/list_changed``) and the policy's model loads (``run_task`` waits for it,
reporting progress). The command itself lives in the composition root
(:mod:`paraagent_runtime.cli.serve_command`).

The first client comes first: the start-up work (listing the sources, loading the model) begins
once a client's ``tools/list`` has been answered, or after :data:`FIRST_CLIENT_GRACE_S`, and the
search index (NumPy, FAISS, the embedder) is built in a thread on first use, so a host that
spawns ``serve`` gets its handshake and tool list without waiting behind that work; a source's
tools are callable as soon as it is listed, ``search_tools`` waits for the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import MCPServer

from ..agent import AgentConfig
from ..dispatch import DispatchConfig
from ..modes import AgentMode
from ..policy.base import Policy
from ..search import NeedAwareSearch, SearchHit, ToolSearch, default_tool_search, index_scope
from ..sources import ToolSource
from ..tools import ToolSpec
from ..toolspace import Toolspace
from .config import MCPConfig, load_mcp_config
from .server import ModelLoad, ToolListAnnouncer, build_paraagent_server, check_bind, serve
from .source import MCPToolSource, ReconnectPolicy, load_mcp_sources
from .startup import SourceStartup

__all__ = ["FIRST_CLIENT_GRACE_S", "running_server", "serve_mcp_config"]

logger = logging.getLogger(__name__)

FIRST_CLIENT_GRACE_S = 0.5
"""The longest the start-up work waits for a first client's ``tools/list`` before it begins."""

ANSWER_LEAVES_S = 0.1
"""After the first ``tools/list`` is answered, the start-up waits this long for it to be sent."""

Announce = Callable[[str], None]
"""Receives the lines ``serve`` says about itself (the CLI prints them on stderr)."""


class _BackgroundSearch:
    """A tool search built on first use and updated in the background, in order.

    ``update`` returns at once, so a source's tools are callable (and announced) while the
    index, with its imports and its embedder, is still being built; ``search`` waits for the
    latest update, and raises what made it fail.
    """

    def __init__(self, build: Callable[[], ToolSearch]) -> None:
        self._build = build
        self._search: ToolSearch | None = None
        self._in_order = asyncio.Lock()
        self._latest: asyncio.Task[None] | None = None

    async def _update(self, tools: Sequence[ToolSpec]) -> None:
        async with self._in_order:
            if self._search is None:
                self._search = await asyncio.to_thread(self._build)
            await self._search.update(tools)

    async def update(self, tools: Sequence[ToolSpec]) -> None:
        """Start indexing exactly ``tools`` (after the updates before it); do not wait."""
        self._latest = asyncio.create_task(self._update(list(tools)))
        self._latest.add_done_callback(_log_index_failure)

    async def _current(self) -> ToolSearch:
        """The search, once the latest update is in."""
        if self._latest is not None:
            await asyncio.shield(self._latest)
        async with self._in_order:
            if self._search is None:
                self._search = await asyncio.to_thread(self._build)
        return self._search

    async def search(self, query: str, *, top_k: int = 5) -> list[tuple[str, float]]:
        """The best ``top_k`` tool ids for ``query``, once the latest update is in."""
        return await (await self._current()).search(query, top_k=top_k)

    async def search_hits(self, query: str, *, top_k: int = 5) -> list[SearchHit]:
        """The best hits, each with the part of ``query`` it answers when the search says."""
        search = await self._current()
        if isinstance(search, NeedAwareSearch):
            return await search.search_hits(query, top_k=top_k)
        found = await search.search(query, top_k=top_k)
        return [SearchHit(identifier, score) for identifier, score in found]

    async def aclose(self) -> None:
        """Stop an update in flight."""
        if self._latest is not None and not self._latest.done():
            self._latest.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._latest


def _log_index_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("serve: building the tool index failed: %s", error)


@contextlib.asynccontextmanager
async def running_server(
    toolspace: Toolspace,
    *,
    policy: Policy | None = None,
    agent_config: AgentConfig | None = None,
    gateway: bool = True,
    reconnect: ReconnectPolicy | None = None,
    grace_s: float = FIRST_CLIENT_GRACE_S,
    announce: Announce | None = None,
) -> AsyncIterator[MCPServer]:
    """The MCP server of paraagent over ``toolspace``, its start-up running in the background.

    Inside the block the sources start (each on its own, retried with back-off while they fail)
    and the policy's model loads, beginning when a first client has listed the tools or after
    ``grace_s``; clients may connect at once. Leaving it stops the start-up; closing the
    toolspace is the caller's.

    Args:
        toolspace: The tools (not refreshed yet; its MCP sources announce their own changes here).
        policy: The model behind ``run_task``; ``None``: gateway only.
        agent_config: ``run_task``'s defaults; its dispatch limits cap gateway results too.
        gateway: Whether to expose ``search_tools`` and ``call_tool``.
        reconnect: The back-off between attempts of a failing source.
        grace_s: The longest the start-up waits for a first client's ``tools/list``.
        announce: Receives one line once every source had its first attempt (how many are
            ready, with how many tools).

    Raises:
        ConfigError: Neither a policy nor the gateway is enabled.
    """
    announcer = ToolListAnnouncer()
    startup = SourceStartup(
        toolspace,
        reconnect=reconnect,
        on_change=announcer.announce,
        on_settled=(lambda: announce(startup.summary())) if announce is not None else None,
    )
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

    async def start() -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(announcer.listed.wait(), grace_s)
            # The answer is still being written (from a worker thread): let it leave first.
            await asyncio.sleep(ANSWER_LEAVES_S)
        if model_load is not None:
            model_load.start()
        await startup.run()

    starting = asyncio.create_task(start())
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
    config: MCPConfig | None = None,
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
    announce: Announce | None = None,
) -> None:
    """Serve paraagent over the servers of an MCP config (and/or other sources) until cancelled.

    Args:
        mcp_config: The ``mcpServers`` JSON whose servers paraagent fronts, if any.
        config: ``mcp_config`` already loaded (it is then not read again).
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
        announce: Receives what ``serve`` says about itself: where it answers and with what
            policy (at once), how many sources and tools are ready (once every source had its
            first attempt).

    Raises:
        ParaAgentError: The bind address, the config or the policy spec cannot be used.
    """
    if transport == "http":
        check_bind(host, token)
    policy = None
    if policy_spec:
        from ..policy import policy_from_spec

        policy = policy_from_spec(policy_spec, base_url=base_url)
    if config is None and mcp_config is not None:
        config = load_mcp_config(mcp_config)
    servers = load_mcp_sources(config) if config is not None else []
    scope = index_scope(mcp_config, with_builtin=bool(sources))
    search = _BackgroundSearch(lambda: default_tool_search(scope))
    toolspace = Toolspace([*servers, *sources], search=search)
    agent_config = AgentConfig(
        mode=mode, max_turns=max_turns, dispatch=dispatch or DispatchConfig()
    )
    if announce is not None:
        announce(_where(transport, host, port, token, policy_spec, gateway, len(toolspace.sources)))
    try:
        async with running_server(
            toolspace,
            policy=policy,
            agent_config=agent_config,
            gateway=gateway,
            announce=announce,
        ) as server:
            await serve(server, transport=transport, host=host, port=port, token=token)
    finally:
        await search.aclose()
        await toolspace.aclose()


def _where(
    transport: str,
    host: str,
    port: int,
    token: str | None,
    policy_spec: str | None,
    gateway: bool,
    sources: int,
) -> str:
    """``serve``'s first line: where it answers, what it offers, with which policy."""
    if transport == "stdio":
        where = "MCP over stdio"
    else:
        literal = f"[{host}]" if ":" in host else host
        guard = "bearer token required" if token else "loopback only, Host/Origin checked"
        where = f"MCP at http://{literal}:{port}/mcp ({guard})"
    offers = ["search_tools + call_tool"] if gateway else []
    if policy_spec:
        offers.insert(0, f"run_task with policy {policy_spec} (model loading in the background)")
    return (
        f"serve: {where}; {'; '.join(offers)}; "
        f"{sources} tool source{'' if sources == 1 else 's'} starting"
    )

"""paraagent served in front of the servers of an MCP config: the library side of `serve`.

The command itself lives in the composition root (:mod:`paraagent_runtime.cli.serve_command`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from ..agent import AgentConfig
from ..dispatch import DispatchConfig
from ..modes import AgentMode
from ..search import default_tool_search, index_scope
from ..sources import ToolSource
from ..toolspace import Toolspace
from .server import build_paraagent_server, serve
from .toolspace import mcp_toolspace

__all__ = ["serve_mcp_config"]


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
        dispatch: The dispatch limits of ``run_task`` (default: :class:`DispatchConfig`).

    Raises:
        ParaAgentError: The config, the policy spec or the servers cannot be used.
    """
    search = default_tool_search(index_scope(mcp_config, with_builtin=bool(sources)))
    if mcp_config is None:
        toolspace = Toolspace(sources, search=search)
    else:
        toolspace = mcp_toolspace(mcp_config, search=search)
        for source in sources:
            await toolspace.add_source(source)
    try:
        await toolspace.refresh()
        policy = None
        if policy_spec:
            from ..policy import policy_from_spec

            policy = policy_from_spec(policy_spec, base_url=base_url)
        server = build_paraagent_server(
            toolspace,
            policy=policy,
            agent_config=AgentConfig(
                mode=mode, max_turns=max_turns, dispatch=dispatch or DispatchConfig()
            ),
            gateway=gateway,
        )
        await serve(server, transport=transport, host=host, port=port, token=token)
    finally:
        await toolspace.aclose()

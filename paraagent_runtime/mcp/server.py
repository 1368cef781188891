"""paraagent as an MCP server other apps register (``paraagent serve``).

Two faces over the same toolspace:

- ``run_task(task, mode?, max_turns?)`` runs the agent and streams a progress notification per
  phase and per call; it returns the answer and a compact trajectory.
- gateway tools ``search_tools(query, top_k)`` and ``call_tool(name, arguments)``, so an app that
  caps its tool count at a few dozen reaches every tool of every configured server. A
  ``call_tool`` result keeps the downstream server's content blocks (text, image, audio,
  resources, resource links) and structured content, capped at the agent's result limit
  (:func:`cap_result`, with a marker when cut).

Over HTTP the server binds 127.0.0.1 unless told otherwise; binding a non-loopback address requires
a bearer token, and with a token set every request without it is refused with 401. On any loopback
address (127.0.0.0/8, ``::1``, ``localhost``) the ``Host`` and ``Origin`` headers must name the
bound address, so a DNS-rebinding page cannot reach the tools.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import ipaddress
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from mcp_types import ToolAnnotations as MCPToolAnnotations

from ..agent import Agent, AgentConfig
from ..dispatch import Dispatcher
from ..errors import ConfigError
from ..events import (
    AgentEvent,
    CallFinished,
    CallProgress,
    CallStarted,
    PhaseEvent,
)
from ..modes import AgentMode
from ..policy.base import Policy
from ..sources import ToolSource
from ..tools import ToolCall
from ..toolspace import Toolspace
from ..trajectory import Episode
from .source import MCPToolSource
from .startup import SourceStartup

__all__ = [
    "BearerTokenMiddleware",
    "TRUNCATED_META",
    "build_paraagent_server",
    "cap_result",
    "check_bind",
    "compact_trajectory",
    "http_app",
    "loopback_security",
    "serve",
]

logger = logging.getLogger(__name__)

PROGRESS_EVERY_S = 5.0
"""While a call waits (sources starting, the model loading), a progress message this often: a
host's request timer restarts on progress."""

QUIET_WAIT_S = 1.0
"""A call that waits (a search while the index builds) longer than this reports progress."""

Result = TypeVar("Result")

Report = Callable[[str], Awaitable[None]]
"""Sends one progress message of the running request."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TRUNCATED_META = "io.paraagent/truncated"
"""``_meta`` key of a ``call_tool`` result cut to the limit: the original sizes of both forms."""

_LOOPBACK_NAMES = {"localhost"}
_LOCALHOST_ADDRESSES = {"127.0.0.1", "::1"}


def compact_trajectory(episode: Episode) -> dict[str, Any]:
    """A small JSON view of an episode: status, answer, and per turn its phase and calls."""
    turns = []
    for turn in episode.turns:
        calls = []
        for call, result in zip(turn.calls, turn.results, strict=False):
            entry: dict[str, Any] = {
                "name": call.name,
                "arguments": call.arguments,
                "ok": result.ok,
            }
            if not result.ok:
                entry["error"] = result.error
            calls.append(entry)
        record: dict[str, Any] = {"phase": turn.phase, "calls": calls}
        if turn.answer is not None:
            record["answer"] = turn.answer
        turns.append(record)
    return {
        "status": episode.status,
        "answer": episode.answer,
        "error": episode.error,
        "n_turns": len(episode.turns),
        "n_calls": episode.n_calls,
        "duration_s": round(episode.duration_s, 3),
        "turns": turns,
    }


def _progress_message(event: AgentEvent) -> str | None:
    if isinstance(event, PhaseEvent):
        return f"turn {event.turn + 1}: {event.phase or 'no phase'} ({len(event.calls)} calls)"
    if isinstance(event, CallStarted):
        return f"turn {event.turn + 1}: calling {event.call.name}"
    if isinstance(event, CallFinished):
        outcome = "ok" if event.result.ok else f"error ({event.result.error_kind.value})"  # type: ignore[union-attr]
        return f"turn {event.turn + 1}: {event.result.name} {outcome}"
    if isinstance(event, CallProgress):
        return f"turn {event.turn + 1}: {event.name} {event.label}"
    return None


def _block_chars(block: ContentBlock) -> int:
    """How much of the result budget a content block takes: its text or base64 payload."""
    if isinstance(block, TextContent):
        return len(block.text)
    if isinstance(block, ImageContent | AudioContent):
        return len(block.data)
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        return len(resource.text if isinstance(resource, TextResourceContents) else resource.blob)
    return len(block.model_dump_json())


def cap_result(result: CallToolResult, limit: int) -> CallToolResult:
    """``result`` with each of its two forms at most ``limit`` characters, and a marker when cut.

    The content blocks (a host shows these) keep their kind (image, audio, resource, resource
    link) and order: blocks are taken while their text or base64 payload fits, a text block that
    does not fit is cut, a binary or embedded one is left out with a one-line note. Structured
    content (the same result as JSON, for hosts that read it) stays when its JSON fits, else it
    is dropped. A cut result ends with a text block saying what was left out, and its ``_meta``
    has :data:`TRUNCATED_META`.

    Args:
        result: The downstream tool's result.
        limit: The most characters of either form passed on.
    """
    sizes = [_block_chars(block) for block in result.content]
    structured = (
        len(json.dumps(result.structured_content, default=str))
        if result.structured_content is not None
        else 0
    )
    if sum(sizes) <= limit and structured <= limit:
        return result
    left = limit
    content: list[ContentBlock] = []
    for block, size in zip(result.content, sizes, strict=True):
        if size <= left:
            content.append(block)
            left -= size
        elif isinstance(block, TextContent) and left > 0:
            content.append(TextContent(text=block.text[:left]))
            left = 0
        else:
            kind = getattr(block, "mime_type", None) or block.type
            content.append(TextContent(text=f"[{kind} block of {size} chars left out]"))
    cut = [f"content of {sum(sizes)} chars to {limit - left}"] if sum(sizes) > limit else []
    if structured > limit:
        cut.append(f"structured content of {structured} chars left out")
    content.append(TextContent(text=f"[truncated at {limit} chars: {'; '.join(cut)}]"))
    return CallToolResult(
        content=content,
        structured_content=result.structured_content if structured <= limit else None,
        is_error=result.is_error,
        _meta={
            **(result.meta or {}),
            TRUNCATED_META: {"content_chars": sum(sizes), "structured_chars": structured},
        },
    )


class ToolListAnnouncer:
    """Sends ``notifications/tools/list_changed`` to every connected client, in both eras.

    Clients of the 2026-07-28 era hear it on ``subscriptions/listen`` (:attr:`bus`, the server's
    subscription bus); clients of the handshake era on their connection, and their
    ``initialize`` result advertises ``tools.listChanged`` (the SDK's ``MCPServer`` leaves it
    off). Pass the announcer as the server's ``subscriptions`` bus and as a middleware: it
    remembers each handshake-era connection at ``initialize``, and sets :attr:`listed` once a
    client's ``tools/list`` has been answered.
    """

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listed = asyncio.Event()
        self._sessions: list[ServerSession] = []

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Middleware: advertise ``tools.listChanged`` and remember the client at ``initialize``."""
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            self.listed.set()
        elif ctx.method == "initialize" and isinstance(result, dict):
            tools = result.get("capabilities", {}).get("tools")
            if isinstance(tools, dict):
                tools["listChanged"] = True
            self._sessions.append(ctx.session)
        return result

    async def announce(self) -> None:
        """Tell every client that the tools changed; forget clients that are gone."""
        await self.bus.publish(ToolsListChanged())
        for session in list(self._sessions):
            try:
                await session.send_tool_list_changed()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._sessions.remove(session)


@runtime_checkable
class LoadsModel(Protocol):
    """A policy with a model to load before its first turn (``load()``: blocking, idempotent)."""

    def load(self) -> None:
        """Load the model now."""


class ModelLoad:
    """A policy's model loaded once, in a thread: ``serve`` starts it, ``run_task`` waits for it.

    Args:
        policy: The policy; one without a ``load()`` (:class:`LoadsModel`) has nothing to wait for.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._task: asyncio.Future[None] | None = None

    def start(self) -> None:
        """Start loading in the background (once; later calls do nothing)."""
        if self._task is None and isinstance(self.policy, LoadsModel):
            self._task = asyncio.ensure_future(asyncio.to_thread(self.policy.load))
            self._task.add_done_callback(_log_load_failure)

    async def wait(self, report: Report) -> None:
        """Start if needed and wait until the model is loaded, reporting while it loads.

        Raises:
            ToolError: The model could not be loaded (the message says why).
        """
        self.start()
        task = self._task
        if task is None:
            return
        if not task.done():
            started = time.monotonic()
            await _reporting(
                lambda: asyncio.shield(task),
                lambda: f"loading the model ({time.monotonic() - started:.0f}s)",
                report,
            )
        if not task.cancelled() and (error := task.exception()) is not None:
            raise ToolError(f"the model could not be loaded: {error}") from error


async def _reporting(
    wait: Callable[[], Awaitable[object]], message: Callable[[], str], report: Report
) -> None:
    """Await ``wait()``, reporting ``message()`` first and every :data:`PROGRESS_EVERY_S`."""
    while True:
        await report(message())
        with anyio.move_on_after(PROGRESS_EVERY_S):
            await wait()
            return


async def _reporting_if_slow(task: asyncio.Future[Result], what: str, report: Report) -> Result:
    """``task``'s result; past :data:`QUIET_WAIT_S`, ``what`` is reported while it runs.

    The task is cancelled if the request is.
    """
    try:
        done, _ = await asyncio.wait({task}, timeout=QUIET_WAIT_S)
        if not done:
            started = time.monotonic() - QUIET_WAIT_S
            await _reporting(
                lambda: asyncio.shield(task),
                lambda: f"{what} ({time.monotonic() - started:.0f}s)",
                report,
            )
        return task.result()
    finally:
        task.cancel()


async def _sources_started(startup: SourceStartup | None, report: Report) -> None:
    """Wait until every source had its first attempt, reporting those still starting."""
    if startup is None or startup.settled:
        return
    await _reporting(
        startup.wait_settled,
        lambda: f"waiting for the tool sources to start: {', '.join(startup.starting())}",
        report,
    )


def _log_load_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("serve: the model could not be loaded: %s", error)


def build_paraagent_server(
    toolspace: Toolspace,
    *,
    policy: Policy | None = None,
    agent_config: AgentConfig | None = None,
    gateway: bool = True,
    name: str = "paraagent",
    announcer: ToolListAnnouncer | None = None,
    model_load: ModelLoad | None = None,
    startup: SourceStartup | None = None,
) -> MCPServer:
    """Build the MCP server exposing paraagent over ``toolspace``.

    Args:
        toolspace: The tools of the configured sources (refreshed by the caller, or by
            ``startup`` in the background).
        policy: The model behind ``run_task``; without one, only the gateway tools exist.
        agent_config: Defaults for ``run_task`` (its ``mode``/``max_turns`` override them); its
            ``dispatch.max_result_chars`` also caps ``call_tool`` results (:func:`cap_result`).
        gateway: Expose ``search_tools`` and ``call_tool``.
        name: The server name announced to clients.
        announcer: Sends ``tools/list_changed`` when the tools behind the gateway change.
        model_load: The policy's model load ``run_task`` waits for (default: loaded at the first
            ``run_task``).
        startup: The sources starting in the background: ``run_task``, ``search_tools`` and a
            call of a tool not there yet wait for every source's first attempt (reporting
            progress); an unknown tool's message names the sources not reachable.

    Raises:
        ConfigError: Neither a policy nor the gateway is enabled (the server would be empty).
    """
    if policy is None and not gateway:
        raise ConfigError(
            "serve: nothing to serve (give a policy for run_task or enable the gateway)"
        )
    server = MCPServer(
        name,
        instructions=_instructions(policy is not None, gateway),
        subscriptions=announcer.bus if announcer is not None else None,
        middleware=[announcer] if announcer is not None else None,
    )
    defaults = agent_config or AgentConfig()
    result_chars = defaults.dispatch.max_result_chars
    # The gateway's calls take the agent's path: argument check, limits, timeout, retries.
    dispatcher = Dispatcher(defaults.dispatch)

    if policy is not None:
        agent_policy = policy
        loading = model_load or ModelLoad(policy)

        @server.tool(
            description="Run the paraagent agent on a task over all configured tools; returns "
            "the answer and a compact trajectory. Progress is reported per phase and per call.",
            annotations=MCPToolAnnotations(open_world_hint=True),
        )
        async def run_task(
            task: str,
            ctx: Context,
            mode: AgentMode | None = None,
            max_turns: int | None = None,
        ) -> dict[str, Any]:
            try:
                config = dataclasses.replace(
                    defaults,
                    mode=mode or defaults.mode,
                    max_turns=max_turns if max_turns is not None else defaults.max_turns,
                )
            except ConfigError as exc:
                raise ToolError(str(exc)) from exc
            report = _reporter(ctx)

            async def on_event(event: AgentEvent) -> None:
                message = _progress_message(event)
                if message is not None:
                    await report(message)

            await loading.wait(report)
            await _sources_started(startup, report)
            episode = await Agent(agent_policy, toolspace, config).run(task, on_event=on_event)
            return compact_trajectory(episode)

    if gateway:

        @server.tool(
            description="Search every tool paraagent can reach; returns the best matches with "
            "their names, descriptions and JSON input schemas (call them with call_tool).",
            annotations=MCPToolAnnotations(read_only_hint=True, open_world_hint=False),
        )
        async def search_tools(query: str, ctx: Context, top_k: int = 5) -> list[dict[str, Any]]:
            if not 1 <= top_k <= 50:
                raise ToolError(f"top_k: must be between 1 and 50, got {top_k}")
            report = _reporter(ctx)
            await _sources_started(startup, report)
            search = asyncio.ensure_future(toolspace.search(query, top_k=top_k))
            found = await _reporting_if_slow(search, "building the tool index", report)
            return [spec.schema_view() for spec in found]

        @server.tool(
            description="Call a tool found with search_tools by its name, with JSON arguments.",
            annotations=MCPToolAnnotations(open_world_hint=True),
        )
        async def call_tool(
            name: str, ctx: Context, arguments: dict[str, Any] | None = None
        ) -> CallToolResult:
            arguments = arguments or {}
            route = toolspace.route(name)
            if route is None:
                await _sources_started(startup, _reporter(ctx))
                route = toolspace.route(name)
            if route is None:
                raise ToolError(_unknown_tool(toolspace, startup, name))
            call = ToolCall(id=ctx.request_id or "gateway", name=name, arguments=arguments)
            result = await dispatcher.call(call, route, invoke=_call_result)
            if not result.ok:
                kind = result.error_kind.value  # type: ignore[union-attr]
                raise ToolError(f"{name}: {kind}: {result.error}")
            return cap_result(result.content, result_chars)

    return server


async def _call_result(source: ToolSource, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    """A call's MCP result: an MCP server's as it sent it, another source's value as text."""
    if isinstance(source, MCPToolSource):
        return await source.call_tool_result(tool, arguments)
    value = await source.call_tool(tool, arguments)
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return CallToolResult(content=[TextContent(text=text)])


def _reporter(ctx: Context) -> Report:
    """Progress messages of ``ctx``'s request, numbered from 1."""
    step = 0

    async def report(message: str) -> None:
        nonlocal step
        step += 1
        await ctx.report_progress(step, None, message)

    return report


def _unknown_tool(toolspace: Toolspace, startup: SourceStartup | None, name: str) -> str:
    message = toolspace.unknown_tool_message(name)
    if startup is not None:
        down = [
            f"{source} {status.describe()}"
            for source, status in startup.status.items()
            if status.state != "ready"
        ]
        if down:
            message += f" Not reachable now: {'; '.join(down)}."
    return message


def _instructions(has_agent: bool, gateway: bool) -> str:
    parts = []
    if has_agent:
        parts.append("run_task delegates a whole task to the paraagent agent.")
    if gateway:
        parts.append("search_tools finds tools among all configured servers; call_tool runs one.")
    return " ".join(parts)


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse an HTTP bind address that would expose the tools without a token.

    Cheap and side-effect free: ``serve`` runs it before any start-up work.

    Raises:
        ConfigError: ``host`` is not a loopback address (127.0.0.0/8, ``::1``, ``localhost``)
            and no token is given.
    """
    if not _is_loopback(host) and not token:
        raise ConfigError(
            f"serve: binding {host} exposes your tools to the network; "
            "set a bearer token (--token or $PARAAGENT_SERVE_TOKEN) or bind 127.0.0.1"
        )


def loopback_security(host: str) -> TransportSecuritySettings | None:
    """Host/Origin checks (DNS-rebinding protection) for a loopback bind address, else None.

    The allowed ``Host`` values are the bound address itself (with any port) and, when it is
    where ``localhost`` points (``127.0.0.1``, ``::1``), ``localhost``; allowed origins are
    ``http://`` and ``https://`` on those hosts.
    """
    if not _is_loopback(host):
        return None
    if host in _LOOPBACK_NAMES:
        names = ["localhost", "127.0.0.1", "[::1]"]
    else:
        address = ipaddress.ip_address(host)
        literal = f"[{address.compressed}]" if address.version == 6 else address.compressed
        names = [literal, "localhost"] if address.compressed in _LOCALHOST_ADDRESSES else [literal]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[spelling for name in names for spelling in (name, f"{name}:*")],
        allowed_origins=[
            f"{scheme}://{spelling}"
            for name in names
            for spelling in (name, f"{name}:*")
            for scheme in ("http", "https")
        ],
    )


class BearerTokenMiddleware:
    """ASGI middleware refusing HTTP requests that lack ``Authorization: Bearer <token>``.

    The scheme is matched case-insensitively (RFC 7235); the token exactly, in constant time.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    def _authorized(self, header: bytes) -> bool:
        scheme, _, given = header.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authorized requests (and lifespan events) through; answer others with 401."""
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if not self._authorized(headers.get(b"authorization", b"")):
                body = b'{"error": "missing or invalid bearer token"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer, *, host: str = "127.0.0.1", token: str | None = None) -> ASGIApp:
    """The streamable HTTP app (path ``/mcp``), behind a bearer token when one is given.

    On a loopback address every request's ``Host`` and ``Origin`` must name that address
    (:func:`loopback_security`), token or not.

    Raises:
        ConfigError: ``host`` is not a loopback address and no token is given.
    """
    check_bind(host, token)
    app: ASGIApp = server.streamable_http_app(host=host, transport_security=loopback_security(host))
    return BearerTokenMiddleware(app, token) if token else app


async def serve(
    server: MCPServer,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
) -> None:
    """Serve ``server`` over stdio or streamable HTTP until cancelled.

    Raises:
        ConfigError: An HTTP bind address other than loopback without a token.
    """
    if transport == "stdio":
        await server.run_stdio_async()
        return
    import uvicorn

    app = http_app(server, host=host, token=token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()

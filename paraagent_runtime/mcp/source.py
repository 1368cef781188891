"""An MCP server as a tool source: one class for every transport (stdio, HTTP, SSE, in-memory).

The connection lives in its own task (the SDK's transports are anyio context managers that must
be entered and left by one task); calls from any task share it and run concurrently. A server
that dies fails its in-flight and next calls with :class:`MCPConnectionError`; the next use after
that reconnects, backing off while reconnection attempts keep failing. Other sources are not
affected: nothing here is shared between servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ..errors import MCPConnectionError, ToolExecutionError
from ..naming import tool_id
from ..progress import current_reporter
from ..sources import call_bound
from ..tools import ToolAnnotations, ToolSpec
from .config import MCPConfig, MCPServerConfig, load_mcp_config

__all__ = [
    "ConnectionState",
    "ElicitationRequest",
    "ElicitationResponse",
    "MCPTimeoutError",
    "MCPToolSource",
    "ProgressUpdate",
    "ReconnectPolicy",
    "load_mcp_sources",
    "spec_from_mcp",
]

logger = logging.getLogger(__name__)

_MAX_PAGES = 1000
_TRANSPORT_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


class MCPTimeoutError(ToolExecutionError, TimeoutError):
    """A call exceeded its per-call timeout; the request was cancelled on the server."""


@dataclass(frozen=True)
class ProgressUpdate:
    """A progress notification a server sent for one running call."""

    source: str
    tool: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class ElicitationRequest:
    """A server asks the user for input while a tool runs (form or URL elicitation)."""

    source: str
    message: str
    requested_schema: dict[str, Any] | None = None
    url: str | None = None


@dataclass(frozen=True)
class ElicitationResponse:
    """The user's answer to an :class:`ElicitationRequest`."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


@dataclass(frozen=True)
class ConnectionState:
    """Where an MCP source's connection stands, for status displays.

    Attributes:
        status: ``connected`` (a live session), ``disconnected`` (none yet, or the session
            ended; the next use connects at once), ``reconnecting`` (the last attempt failed;
            calls fail fast until ``retry_in_s`` has passed) or ``closed`` (for good).
        error: Why the last connection attempt failed (``reconnecting`` only).
        retry_in_s: Seconds until the next attempt is allowed (``reconnecting`` only).
    """

    status: Literal["connected", "disconnected", "reconnecting", "closed"]
    error: str | None = None
    retry_in_s: float = 0.0


@dataclass(frozen=True)
class ReconnectPolicy:
    """Backoff between failed reconnection attempts (the first one after a death is immediate).

    Attributes:
        initial_backoff_s: the wait after the first failed attempt; doubled after each further one.
        max_backoff_s: the longest wait.
        clock: the monotonic clock the waits are measured on (a test can pass one it advances).
    """

    initial_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    clock: Callable[[], float] = time.monotonic

    def delay(self, failures: int) -> float:
        """Seconds to wait before the next attempt after ``failures`` consecutive failures."""
        if failures <= 0:
            return 0.0
        return min(self.initial_backoff_s * 2 ** (failures - 1), self.max_backoff_s)


ToolsChangedCallback = Callable[[str], Awaitable[None] | None]
ProgressCallback = Callable[[ProgressUpdate], Awaitable[None] | None]
ElicitationCallback = Callable[[ElicitationRequest], Awaitable[ElicitationResponse]]
ServerObject = MCPServer | Server[Any]


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    leaf = _leaf(exc)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


async def _maybe_await(value: Awaitable[None] | None) -> None:
    if inspect.isawaitable(value):
        await value


class _Connection:
    """One live session, owned by a dedicated task that enters and leaves the SDK client."""

    def __init__(self, client: Client, on_list_changed: Callable[[], None]) -> None:
        self.client = client
        self.alive = False
        self._on_list_changed = on_list_changed
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None

    async def open(self, timeout: float) -> None:
        """Start the owner task and wait until the handshake is done."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ready = ready
        # A fresh context: the connection outlives the call that opened it, and must not carry
        # that call's progress reporter (paraagent_runtime.progress) into later calls.
        self._task = asyncio.create_task(self._run(ready), context=contextvars.Context())
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            await self.close()
            raise TimeoutError(f"no handshake within {timeout:g}s") from None
        except BaseException:
            await self.close()
            raise

    async def _run(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self.client as client, anyio.create_task_group() as group:
                capabilities = client.server_capabilities.tools
                if (
                    client.protocol_version in MODERN_PROTOCOL_VERSIONS
                    and capabilities is not None
                    and capabilities.list_changed
                ):
                    await group.start(self._listen)
                self.alive = True
                ready.set_result(None)
                await self._stop.wait()
                group.cancel_scope.cancel()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                logger.debug("MCP connection ended: %s", _describe(exc))
        finally:
            self.alive = False
            if not ready.done():
                ready.cancel()

    async def _listen(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        try:
            async with self.client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                async for _event in subscription:
                    self._on_list_changed()
        except Exception as exc:
            logger.debug("tools/list_changed subscription ended: %s", _describe(exc))
            task_status.started()

    async def close(self) -> None:
        """Leave the session (terminating a stdio child) and wait for the owner task."""
        self.alive = False
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self._ready is not None and not self._ready.done():
            task.cancel()  # still in the handshake: there is no session to leave
        else:
            try:
                await asyncio.wait_for(asyncio.shield(task), 5.0)
                return
            except TimeoutError:
                task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class MCPToolSource:
    """One MCP server, seen as a :class:`~paraagent_runtime.sources.ToolSource`.

    Args:
        name: The source name (prefix of the tool ids, ``<name>/<tool>``).
        config: How to reach the server; or an ``MCPServer`` / low-level ``Server`` object to
            connect to in-process.
        server: The in-process server when ``config.type == "memory"``.
        on_tools_changed: Called with the source name when the server's tool list changed
            (the cached list is already invalidated; refresh the toolspace from here).
        on_progress: Receives the progress notifications of running calls.
        on_elicitation: Answers the server's elicitation requests; without it they are declined.
        reconnect: Backoff between failed reconnection attempts.

    Example:
        >>> source = MCPToolSource("time", MCPServerConfig(type="stdio", command="mcp-server-time"))
    """

    def __init__(
        self,
        name: str,
        config: MCPServerConfig | ServerObject,
        *,
        server: ServerObject | None = None,
        on_tools_changed: ToolsChangedCallback | None = None,
        on_progress: ProgressCallback | None = None,
        on_elicitation: ElicitationCallback | None = None,
        reconnect: ReconnectPolicy | None = None,
    ) -> None:
        if isinstance(config, MCPServer | Server):
            server, config = config, MCPServerConfig(type="memory")
        if config.type == "memory" and server is None:
            raise ValueError(f"MCP source {name!r}: a memory transport needs the server object")
        self.name = name
        self.config = config
        self.on_tools_changed = on_tools_changed
        self.on_progress = on_progress
        self.on_elicitation = on_elicitation
        self._server = server
        self._reconnect = reconnect or ReconnectPolicy()
        self._conn: _Connection | None = None
        self._lock = asyncio.Lock()
        self._failures = 0
        self._next_attempt = 0.0
        self._last_error = ""
        self._tools: list[ToolSpec] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def connected(self) -> bool:
        """Whether a live session exists right now."""
        return self._conn is not None and self._conn.alive

    def connection_state(self) -> ConnectionState:
        """The connection's status now (a failed attempt shows as ``reconnecting``)."""
        if self._closed:
            return ConnectionState("closed")
        if self.connected:
            return ConnectionState("connected")
        if self._failures:
            retry_in = max(0.0, self._next_attempt - self._reconnect.clock())
            return ConnectionState("reconnecting", self._last_error, retry_in)
        return ConnectionState("disconnected")

    async def connect(self) -> None:
        """Connect now (otherwise the first use connects).

        Raises:
            MCPConnectionError: The server cannot be started or reached, or the handshake failed.
        """
        await self._connection()

    async def list_tools(self) -> list[ToolSpec]:
        """Return the server's tools (all pages), filtered by ``allowedTools``/``excludedTools``.

        Raises:
            MCPConnectionError: The server is unreachable.
        """
        if self._tools is not None and self.connected:
            return list(self._tools)
        conn = await self._connection()
        tools: list[types.Tool] = []
        cursor: str | None = None
        seen: set[str] = set()
        try:
            for _ in range(_MAX_PAGES):
                page = await conn.client.list_tools(cursor=cursor, cache_mode="bypass")
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None or cursor in seen:
                    break
                seen.add(cursor)
        except Exception as exc:
            translated = self._translated(conn, "tools/list", exc)
            if translated is None:
                raise
            raise translated from exc
        self._tools = [
            spec_from_mcp(self.name, tool) for tool in tools if self.config.exposes(tool.name)
        ]
        return list(self._tools)

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` and return its structured content, else its text/JSON content.

        Raises:
            ToolExecutionError: The tool reported an error or returned an invalid result.
            MCPTimeoutError: No result within the server's ``timeout`` (cancelled on the server).
            MCPConnectionError: The server is unreachable or died during the call.
        """
        result = await self.call_tool_result(tool, arguments)
        if result.structured_content is not None:
            return result.structured_content
        return _content_value(result.content)

    async def call_tool_result(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call ``tool`` and return the server's result as sent: every content block, structured.

        Under a dispatcher whose call limit is no longer than the server's ``timeout``, that limit
        is the call's only timer (the SDK's own read timeout is not started).

        Raises:
            ToolExecutionError: The tool reported an error or returned an invalid result.
            MCPTimeoutError: No result within the server's ``timeout`` (cancelled on the server).
            MCPConnectionError: The server is unreachable or died during the call.
        """
        if not self.config.exposes(tool):
            raise ToolExecutionError(f"{self.name}/{tool}: excluded by the server's tool filter")
        conn = self._conn
        if conn is None or not conn.alive:
            conn = await self._connection()
        bound = call_bound()
        bounded = bound is not None and bound <= self.config.timeout
        progress = None
        callback, reporter = self.on_progress, current_reporter()
        if callback is not None or reporter is not None:

            async def progress(value: float, total: float | None, message: str | None) -> None:
                if callback is not None:
                    await _maybe_await(
                        callback(ProgressUpdate(self.name, tool, value, total, message))
                    )
                if reporter is not None:
                    await reporter(value, total, message)

        try:
            result = await conn.client.call_tool(
                tool,
                arguments,
                read_timeout_seconds=None if bounded else self.config.timeout,
                progress_callback=progress,
            )
        except Exception as exc:
            translated = self._translated(conn, tool, exc)
            if translated is None:
                raise
            raise translated from exc
        if result.is_error:
            raise ToolExecutionError(f"{self.name}/{tool}: {_content_text(result.content)}")
        return result

    async def aclose(self) -> None:
        """Close the session (terminating a stdio child) and cancel pending callbacks."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
        for task in list(self._background):
            task.cancel()

    async def _connection(self) -> _Connection:
        if self._closed:
            raise MCPConnectionError(f"MCP server {self.name!r}: source is closed")
        conn = self._conn
        if conn is not None and conn.alive:
            return conn
        async with self._lock:
            if self._conn is not None and self._conn.alive:
                return self._conn
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
            wait = self._next_attempt - self._reconnect.clock()
            if wait > 0:
                raise MCPConnectionError(
                    f"MCP server {self.name!r} is unavailable ({self._last_error}); "
                    f"next reconnection attempt in {wait:.1f}s"
                )
            conn = _Connection(self._client(), self._tools_changed)
            try:
                await conn.open(self.config.connect_timeout)
            except Exception as exc:
                self._failures += 1
                self._last_error = _describe(exc)
                self._next_attempt = self._reconnect.clock() + self._reconnect.delay(self._failures)
                raise MCPConnectionError(
                    f"MCP server {self.name!r}: cannot connect ({self._last_error})"
                ) from exc
            if self._closed:  # aclose() ran while the handshake was in flight
                await conn.close()
                raise MCPConnectionError(f"MCP server {self.name!r}: source is closed")
            self._failures = 0
            self._tools = None
            self._conn = conn
            return conn

    def _client(self) -> Client:
        config = self.config
        target: Any
        if config.type == "memory":
            target = self._server
        elif config.type == "stdio":
            assert config.command is not None
            target = StdioServerParameters(
                command=config.command, args=config.args, env=config.env or None, cwd=config.cwd
            )
        elif config.type == "http":
            target = _http_transport(config)
        else:
            assert config.url is not None
            target = sse_client(config.url, headers=config.http_headers(), timeout=config.timeout)
        return Client(
            target,
            mode=config.protocol,
            cache=None,
            message_handler=self._on_message,
            elicitation_callback=self._elicit,
        )

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed()
        elif isinstance(message, Exception):
            logger.debug("MCP server %r transport error: %s", self.name, _describe(message))

    def _tools_changed(self) -> None:
        self._tools = None
        if self.on_tools_changed is None:
            return
        result = self.on_tools_changed(self.name)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        if self.on_elicitation is None:
            return types.ElicitResult(action="decline")
        request = ElicitationRequest(
            source=self.name,
            message=params.message,
            requested_schema=getattr(params, "requested_schema", None),
            url=getattr(params, "url", None),
        )
        response = await self.on_elicitation(request)
        return types.ElicitResult(action=response.action, content=response.content)

    def _translated(self, conn: _Connection, what: str, exc: Exception) -> Exception | None:
        """The paraagent exception of an SDK or transport failure of one request, else None.

        A function, not a context manager around the request: it costs nothing on success.
        """
        where = f"{self.name}/{what}"
        if isinstance(exc, MCPError):
            if exc.code == types.REQUEST_TIMEOUT:
                return MCPTimeoutError(
                    f"{where}: no result within {self.config.timeout:g}s (cancelled on the server)"
                )
            if exc.code == types.CONNECTION_CLOSED:
                self._mark_dead(conn)
                return MCPConnectionError(
                    f"MCP server {self.name!r} closed the connection during {what}"
                )
            return ToolExecutionError(f"{where}: {exc.message}")
        if isinstance(
            exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream
        ):
            self._mark_dead(conn)
            return MCPConnectionError(f"MCP server {self.name!r} is gone ({_describe(exc)})")
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "result"
            return ToolExecutionError(
                f"{where}: the server returned a malformed result ({field}: {first['msg']})"
            )
        if isinstance(exc, RuntimeError):
            return ToolExecutionError(f"{where}: {str(exc).splitlines()[0]}")
        return None

    def _mark_dead(self, conn: _Connection) -> None:
        conn.alive = False
        task = asyncio.ensure_future(conn.close())
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def spec_from_mcp(source: str, tool: types.Tool) -> ToolSpec:
    """The spec of an MCP ``tools/list`` entry served by ``source`` (hints become annotations)."""
    hints = tool.annotations
    read_only = bool(hints and hints.read_only_hint)
    destructive = (
        hints.destructive_hint
        if hints is not None and hints.destructive_hint is not None
        else not read_only
    )
    annotations = ToolAnnotations(
        read_only=read_only,
        destructive=bool(destructive) and not read_only,
        idempotent=read_only or bool(hints and hints.idempotent_hint),
        open_world=True
        if hints is None or hints.open_world_hint is None
        else hints.open_world_hint,
        title=(hints.title if hints and hints.title else None) or tool.title,
    )
    return ToolSpec(
        id=tool_id(source, tool.name),
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=annotations,
        provider=source,
    )


@contextlib.asynccontextmanager
async def _http_transport(config: MCPServerConfig) -> AsyncIterator[Any]:
    assert config.url is not None
    async with create_mcp_http_client(headers=config.http_headers()) as http:
        async with streamable_http_client(config.url, http_client=http) as streams:
            yield streams


def _block_value(block: Any) -> Any:
    if isinstance(block, types.TextContent):
        text = block.text
        if text[:1] in "{[":
            with contextlib.suppress(ValueError):
                return json.loads(text)
        return text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return {"type": block.type, "mime_type": block.mime_type, "data": block.data}
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        body = getattr(resource, "text", None)
        return {"type": "resource", "uri": str(resource.uri), "text": body}
    if isinstance(block, types.ResourceLink):
        return {"type": "resource_link", "uri": str(block.uri), "name": block.name}
    return block.model_dump(mode="json", exclude_none=True)


def _content_value(content: list[Any]) -> Any:
    if not content:
        return None
    values = [_block_value(block) for block in content]
    return values[0] if len(values) == 1 else values


def _content_text(content: list[Any]) -> str:
    texts = [block.text for block in content if isinstance(block, types.TextContent)]
    return " ".join(texts).strip() or "the tool reported an error"


def load_mcp_sources(
    path: str | Path | MCPConfig,
    *,
    on_tools_changed: ToolsChangedCallback | None = None,
    on_progress: ProgressCallback | None = None,
    on_elicitation: ElicitationCallback | None = None,
    reconnect: ReconnectPolicy | None = None,
) -> list[MCPToolSource]:
    """Build one (not yet connected) source per enabled server of an MCP configuration file.

    Args:
        path: The file, or its already loaded :class:`MCPConfig` (not read again).
        on_tools_changed: Given to every source (:class:`MCPToolSource`).
        on_progress: Given to every source.
        on_elicitation: Given to every source.
        reconnect: Given to every source.

    Raises:
        ConfigError: The file cannot be used (the message names the field).
    """
    config = path if isinstance(path, MCPConfig) else load_mcp_config(path)
    return [
        MCPToolSource(
            name,
            server,
            on_tools_changed=on_tools_changed,
            on_progress=on_progress,
            on_elicitation=on_elicitation,
            reconnect=reconnect,
        )
        for name, server in config.enabled().items()
    ]

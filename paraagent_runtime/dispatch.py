"""Run one turn's tool calls concurrently and turn every failure into a typed observation.

Per turn, :meth:`Dispatcher.run_turn`:

1. rejects calls past ``max_calls_per_turn`` (``too_many_calls``), calls to names nobody serves
   (``unknown_tool``, with close names), to tools the session has not loaded (``unloaded_tool``),
   and arguments that fail the tool's JSON Schema (``invalid_arguments``, the one validation of
   :mod:`.validation`) — before anything runs;
2. answers read-only calls already answered in this episode from the session cache
   (``cached=True``) and runs identical read-only calls within the turn once;
3. runs the rest as concurrent tasks under a per-source and a global semaphore, each attempt
   under ``call_timeout_s`` (``timeout``); blocking (sync) tool functions run in the
   dispatcher's own thread pool of ``max_concurrency`` threads, so a turn's sync calls overlap
   as far as its limits allow (:class:`~.concurrency.SyncExecutor`); read-only or idempotent
   tools are retried on transient errors (see :func:`is_transient_error`) with exponential
   back-off;
4. maps a raising tool to ``tool_error`` and an unreachable MCP server to ``source_unavailable``,
   and shrinks results whose JSON is longer than ``max_result_chars`` to a JSON-safe preview.

Results come back in call order. ``on_start`` is called for every call, in call order, before
anything runs; ``on_finish`` once per call as results arrive, always from the task that called
``run_turn``. ``on_progress`` receives the progress a running call's source reports (see
:mod:`.progress`, e.g. an MCP server's progress notifications), tagged with the call; it may run
in another task (MCP notifications), never after the call's result is in; an exception it raises
is logged, never the call's failure. Cancelling ``run_turn`` cancels
every in-flight call. Plain tasks are used rather than a ``TaskGroup`` so that an exception from a
callback propagates as itself, not wrapped in an ``ExceptionGroup``; ``benchmarks/dispatch.py``
compares the fan-out options (asyncio-pool brought nothing over plain tasks).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .concurrency import SyncExecutor
from .errors import ConfigError, MCPConnectionError, UnknownToolError
from .progress import reporting_to
from .sources import ToolSource, bounding_calls
from .tools import ToolCall, ToolErrorKind, ToolResult, ToolSpec
from .toolspace import Route, ToolSession

__all__ = ["DispatchConfig", "Dispatcher", "Invoke", "ProgressCallback", "is_transient_error"]

Invoke = Callable[[ToolSource, str, dict[str, Any]], Awaitable[Any]]
"""Runs one call on its source, ``(source, tool, arguments)``, and returns what it gives back."""
CallCallback = Callable[[ToolCall], Awaitable[None] | None]
ResultCallback = Callable[[ToolResult], Awaitable[None] | None]
ProgressCallback = Callable[[ToolCall, float, float | None, str | None], Awaitable[None] | None]
"""Receives ``(call, progress, total, message)`` while ``call`` runs."""

_TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
_TRANSIENT_STATUS_TEXT = re.compile(r"\b(?:429|500|502|503|504)\b")
_TRANSIENT_NAME_PARTS = ("ratelimit", "toomanyrequests", "serviceunavailable", "timeout")
_LOCAL_OS_ERRORS = (
    FileNotFoundError,
    FileExistsError,
    PermissionError,
    IsADirectoryError,
    NotADirectoryError,
)


@dataclass(frozen=True)
class DispatchConfig:
    """Limits and policies of the dispatcher.

    Attributes:
        max_calls_per_turn: K_max; calls past it get ``too_many_calls`` and do not run.
        call_timeout_s: limit of one attempt of one call, counted from the moment it holds its
            concurrency slots (queueing time does not count).
        max_concurrency: calls running at once over all sources (shared by every turn and
            episode using this dispatcher).
        per_source_concurrency: calls running at once on one source.
        max_result_chars: longest JSON text of a result shown to the model.
        read_only_retries: extra attempts for read-only or idempotent tools on transient errors.
        retry_backoff_s: first back-off; doubled on each further retry.
        dedup: answer repeated read-only calls from the episode's cache.
    """

    max_calls_per_turn: int = 8
    call_timeout_s: float = 30.0
    max_concurrency: int = 64
    per_source_concurrency: int = 16
    max_result_chars: int = 16_000
    read_only_retries: int = 1
    retry_backoff_s: float = 0.1
    dedup: bool = True

    def __post_init__(self) -> None:
        for name in (
            "max_calls_per_turn",
            "max_concurrency",
            "per_source_concurrency",
            "max_result_chars",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"DispatchConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.call_timeout_s <= 0:
            raise ConfigError(
                f"DispatchConfig.call_timeout_s must be > 0, got {self.call_timeout_s}"
            )
        for name in ("read_only_retries", "retry_backoff_s"):
            if getattr(self, name) < 0:
                raise ConfigError(f"DispatchConfig.{name} must be >= 0, got {getattr(self, name)}")


def is_transient_error(exc: BaseException) -> bool:
    """True when retrying the call might succeed.

    Transient are: timeouts, connection errors, other ``OSError``s except local file-system ones,
    and errors signalling HTTP 429 or 500/502/503/504 — by an integer ``status_code``/``status``
    attribute, by a class name containing RateLimit, TooManyRequests, ServiceUnavailable or
    Timeout, or by one of those status codes as a word in the message. The exception and its
    ``__cause__`` are both checked.
    """
    for error in (exc, exc.__cause__):
        if error is None:
            continue
        if isinstance(error, (TimeoutError, ConnectionError)):
            return True
        if isinstance(error, OSError) and not isinstance(error, _LOCAL_OS_ERRORS):
            return True
        status = getattr(error, "status_code", getattr(error, "status", None))
        if isinstance(status, int) and status in _TRANSIENT_STATUS:
            return True
        class_name = type(error).__name__.lower()
        if any(part in class_name for part in _TRANSIENT_NAME_PARTS):
            return True
        if _TRANSIENT_STATUS_TEXT.search(str(error)):
            return True
    return False


async def _notify(callback: Callable[[Any], Awaitable[None] | None] | None, value: Any) -> None:
    if callback is None:
        return
    outcome = callback(value)
    if inspect.isawaitable(outcome):
        await outcome


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_tool(source: ToolSource, tool: str, arguments: dict[str, Any]) -> Awaitable[Any]:
    return source.call_tool(tool, arguments)


def _dedup_key(route: Route, call: ToolCall) -> str:
    """Equal for calls of one tool with equal arguments, whichever of its names they used."""
    return route.spec.name + "\x00" + json.dumps(call.arguments, sort_keys=True, default=str)


class Dispatcher:
    """Runs the tool calls of a turn through an episode's :class:`ToolSession`.

    Every call takes one path: the session routes its name to a spec and a source (the meta-tools
    are a source of the session), the route's check (the tool's schema, compiled once when the
    toolspace listed it, see :mod:`~paraagent_runtime.validation`) checks its arguments, and the
    source runs it. One dispatcher may serve many concurrent episodes on one event loop: the
    concurrency limits are shared (per source name), the loaded set and de-duplication cache live
    in each episode's session.

    The thread pool of sync tools starts with the first sync call; :meth:`close` stops it (a
    dispatcher dropped without closing releases its idle threads when collected).

    Args:
        config: limits and policies; defaults to :class:`DispatchConfig()`.
    """

    def __init__(self, config: DispatchConfig | None = None) -> None:
        self.config = config or DispatchConfig()
        self._global = asyncio.Semaphore(self.config.max_concurrency)
        self._per_source: dict[str, asyncio.Semaphore] = {}
        self._sync = SyncExecutor(self.config.max_concurrency)

    def close(self) -> None:
        """Stop the sync tools' threads once their running calls end."""
        self._sync.close()

    async def run_turn(
        self,
        calls: Sequence[ToolCall],
        session: ToolSession,
        *,
        on_start: CallCallback | None = None,
        on_finish: ResultCallback | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[ToolResult]:
        """Run ``calls`` concurrently and return one result per call, in call order.

        Never raises for a bad call; only cancellation and exceptions raised by the callbacks
        propagate (in-flight calls are cancelled first).
        """
        for call in calls:
            await _notify(on_start, call)
        results: list[ToolResult | None] = [None] * len(calls)
        leaders: dict[str, int] = {}
        followers: dict[int, list[int]] = {}
        runnable: list[tuple[int, Route]] = []
        keys: dict[int, str] = {}
        for index, call in enumerate(calls):
            admitted = self._admit(index, call, session)
            if isinstance(admitted, ToolResult):
                results[index] = admitted
                continue
            if self._dedupable(admitted.spec):
                key = keys[index] = _dedup_key(admitted, call)
                cached = session.cache.get(key)
                if cached is not None:
                    results[index] = cached.model_copy(
                        update={
                            "call_id": call.id,
                            "name": call.name,
                            "cached": True,
                            "latency_s": 0.0,
                        }
                    )
                    continue
                leader = leaders.setdefault(key, index)
                if leader != index:
                    followers.setdefault(leader, []).append(index)
                    continue
            runnable.append((index, admitted))
        for result in results:
            if result is not None:
                await _notify(on_finish, result)

        # Each task copies the context: the sync pool, and the limit its source may rely on.
        with self._sync.installed(), bounding_calls(self.config.call_timeout_s):
            tasks = {
                asyncio.create_task(
                    self._run(calls[index], route, _call_tool, on_progress, fit=True)
                ): index
                for index, route in runnable
            }
        # Finished tasks queue themselves: cheaper than as_completed's wrapper per task.
        finished: asyncio.Queue[asyncio.Task[ToolResult]] = asyncio.Queue()
        for task in tasks:
            task.add_done_callback(finished.put_nowait)
        try:
            for _ in tasks:
                done = await finished.get()
                index, result = tasks[done], done.result()
                results[index] = result
                if result.ok and index in keys:
                    session.cache[keys[index]] = result
                await _notify(on_finish, result)
                for follower in followers.get(index, ()):
                    results[follower] = result.model_copy(
                        update={
                            "call_id": calls[follower].id,
                            "name": calls[follower].name,
                            "cached": True,
                        }
                    )
                    await _notify(on_finish, results[follower])
        finally:
            pending = [task for task in tasks if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        return cast(list[ToolResult], results)

    def _dedupable(self, spec: ToolSpec) -> bool:
        return self.config.dedup and spec.annotations.read_only

    def _admit(self, index: int, call: ToolCall, session: ToolSession) -> ToolResult | Route:
        """Check one call before it runs: where it goes, or the error result instead."""
        limit = self.config.max_calls_per_turn
        if index >= limit:
            return ToolResult.failure(
                call,
                ToolErrorKind.TOO_MANY_CALLS,
                f"at most {limit} calls run per turn; call #{index + 1} was not run. "
                "Issue it again in a later turn.",
            )
        route = session.route(call.name)
        if route is None and session.get(call.name) is None:
            return ToolResult.failure(
                call, ToolErrorKind.UNKNOWN_TOOL, session.unknown_tool_message(call.name)
            )
        if route is None:
            return ToolResult.failure(
                call,
                ToolErrorKind.UNLOADED_TOOL,
                f"tool {call.name!r} is not loaded yet: call search_tools or "
                f'inspect_tool(name="{call.name}") first, then call it in a later turn.',
            )
        return self._check(call, route) or route

    def _check(self, call: ToolCall, route: Route) -> ToolResult | None:
        """The ``invalid_arguments`` result of a call whose arguments fail the tool's schema."""
        problem = route.check(call.name, call.arguments)
        if problem is None:
            return None
        return ToolResult.failure(
            call, ToolErrorKind.INVALID_ARGUMENTS, _shorten(problem, self.config.max_result_chars)
        )

    def _source_semaphore(self, source: str) -> asyncio.Semaphore:
        semaphore = self._per_source.get(source)
        if semaphore is None:
            semaphore = self._per_source[source] = asyncio.Semaphore(
                self.config.per_source_concurrency
            )
        return semaphore

    async def call(
        self, call: ToolCall, route: Route, *, invoke: Invoke | None = None
    ) -> ToolResult:
        """Run one call to ``route`` the way a turn's calls run, and return its result.

        Its arguments are checked against the tool's schema, it runs under this dispatcher's
        concurrency limits and call timeout (shared with every turn it runs), read-only or
        idempotent tools are retried on transient errors, and failures are typed results. The
        content is what ``invoke`` returned, as is: neither made JSON-safe nor cut to
        ``max_result_chars`` (``paraagent serve``'s gateway passes MCP results on whole, capping
        them itself).

        Args:
            call: The call (its ``name`` is what the caller used).
            route: Where it goes (:meth:`Toolspace.route`).
            invoke: Runs it on the source (default: ``source.call_tool(tool, arguments)``).
        """
        rejected = self._check(call, route)
        if rejected is not None:
            return rejected
        with self._sync.installed(), bounding_calls(self.config.call_timeout_s):
            return await self._run(call, route, invoke or _call_tool, None, fit=False)

    async def _run(
        self,
        call: ToolCall,
        route: Route,
        invoke: Invoke,
        on_progress: ProgressCallback | None,
        *,
        fit: bool,
    ) -> ToolResult:
        config = self.config
        started = time.perf_counter()
        reporter = functools.partial(on_progress, call) if on_progress is not None else None
        annotations = route.spec.annotations
        retryable = annotations.read_only or annotations.idempotent
        retries = config.read_only_retries if retryable else 0
        attempt = 0
        while True:
            deadline: asyncio.Timeout | None = None
            try:
                async with self._source_semaphore(route.source.name), self._global:
                    # Created only now: time spent queueing for a slot is not the call's fault.
                    deadline = asyncio.timeout(config.call_timeout_s)
                    async with deadline:
                        if reporter is None:
                            content = await invoke(route.source, route.tool, call.arguments)
                        else:
                            with reporting_to(reporter):
                                content = await invoke(route.source, route.tool, call.arguments)
            except TimeoutError as exc:
                kind, transient = ToolErrorKind.TIMEOUT, True
                message = (
                    f"no result within {config.call_timeout_s:g} s"
                    if deadline is not None and deadline.expired()
                    else f"{type(exc).__name__}: {exc}"
                )
            except MCPConnectionError as exc:
                kind, transient = ToolErrorKind.SOURCE_UNAVAILABLE, False
                message = f"the source serving {call.name!r} is unavailable: {exc}"
            except UnknownToolError as exc:
                kind, transient, message = ToolErrorKind.UNKNOWN_TOOL, False, str(exc)
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
                kind, transient, message = ToolErrorKind.CANCELLED, False, "the call was cancelled"
            except Exception as exc:  # noqa: BLE001 - any tool failure becomes an observation
                kind, transient = ToolErrorKind.TOOL_ERROR, is_transient_error(exc)
                message = f"{type(exc).__name__}: {exc}"
            else:
                latency = time.perf_counter() - started
                truncated = False
                if fit:
                    content, truncated = self._fit(content)
                return ToolResult(
                    call_id=call.id,
                    name=call.name,
                    content=content,
                    latency_s=latency,
                    truncated=truncated,
                )
            if transient and attempt < retries:
                await asyncio.sleep(config.retry_backoff_s * 2**attempt)
                attempt += 1
                continue
            if attempt:
                message += f" (after {attempt + 1} attempts)"
            return ToolResult.failure(
                call,
                kind,
                _shorten(message, config.max_result_chars),
                latency_s=time.perf_counter() - started,
            )

    def _fit(self, content: Any) -> tuple[Any, bool]:
        """Make ``content`` JSON-safe and at most ``max_result_chars`` long as JSON text."""
        converted = False

        def fallback(value: Any) -> str:
            nonlocal converted
            converted = True
            return str(value)

        text = json.dumps(content, ensure_ascii=False, default=fallback)
        limit = self.config.max_result_chars
        if len(text) <= limit:
            return (json.loads(text) if converted else content), False
        preview_chars = limit
        while True:
            shrunk = {
                "truncated": True,
                "original_chars": len(text),
                "preview": text[:preview_chars],
            }
            excess = len(json.dumps(shrunk, ensure_ascii=False)) - limit
            if excess <= 0 or preview_chars == 0:
                return shrunk, True
            preview_chars = max(0, preview_chars - excess)

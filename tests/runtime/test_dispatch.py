"""Dispatcher: concurrency, limits, cancellation, retries, de-duplication, truncation, errors."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections import Counter
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from paraagent_runtime.dispatch import DispatchConfig, Dispatcher, is_transient_error
from paraagent_runtime.errors import ConfigError, ToolExecutionError
from paraagent_runtime.mcp.source import MCPToolSource
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.tools import ToolAnnotations, ToolCall, ToolErrorKind, ToolResult
from paraagent_runtime.toolspace import Toolspace

READ_ONLY = ToolAnnotations(read_only=True)
DESTRUCTIVE = ToolAnnotations(destructive=True)
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANY_ARGS: dict[str, Any] = {"type": "object"}


class InFlight:
    """Counts calls running at once (overall and per source) and remembers the peaks."""

    def __init__(self) -> None:
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()

    def tool(
        self, source: str, name: str, *, annotations: ToolAnnotations | None = None
    ) -> FunctionTool:
        async def run(**arguments: Any) -> Any:
            self.calls[name] += 1
            for key in ("all", source):
                self.now[key] += 1
                self.peak[key] = max(self.peak[key], self.now[key])
            try:
                for _ in range(3):
                    await asyncio.sleep(0)
                await asyncio.sleep(0.01)
                return {"name": name, **arguments}
            finally:
                for key in ("all", source):
                    self.now[key] -= 1

        return FunctionTool(run, name=name, input_schema=ANY_ARGS, annotations=annotations)


def _calls(*specs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [
        ToolCall(id=f"c{index}", name=name, arguments=arguments)
        for index, (name, arguments) in enumerate(specs)
    ]


async def _dispatcher(
    *sources: Any, preload: bool = True, **config: Any
) -> tuple[Dispatcher, Toolspace]:
    toolspace = Toolspace(list(sources), preload_threshold=10_000 if preload else 0)
    await toolspace.refresh()
    return Dispatcher(DispatchConfig(**config)), toolspace


async def test_results_come_back_in_call_order_with_callbacks() -> None:
    finished_ids: dict[str, asyncio.Event] = {f"c{i}": asyncio.Event() for i in range(3)}

    async def after(call: str | None, value: int) -> int:
        if call is not None:
            await finished_ids[call].wait()
        return value

    source = FunctionToolSource("t", [FunctionTool(after, input_schema=ANY_ARGS)])
    dispatcher, toolspace = await _dispatcher(source, call_timeout_s=10)
    # c1 finishes first, c2 once c1 has, c0 once c2 has.
    calls = _calls(
        ("t__after", {"call": "c2", "value": 0}),
        ("t__after", {"call": None, "value": 1}),
        ("t__after", {"call": "c1", "value": 2}),
    )
    started: list[str] = []
    finished: list[str] = []

    async def on_finish(result: ToolResult) -> None:
        finished.append(result.call_id)
        finished_ids[result.call_id].set()

    results = await dispatcher.run_turn(
        calls,
        await toolspace.new_session(),
        on_start=lambda call: started.append(call.id),
        on_finish=on_finish,
    )
    assert [result.call_id for result in results] == ["c0", "c1", "c2"]
    assert [result.content for result in results] == [0, 1, 2]
    assert started == ["c0", "c1", "c2"]
    assert finished == ["c1", "c2", "c0"]
    assert all(result.ok and result.latency_s > 0 for result in results)


async def test_calls_of_one_turn_really_run_at_the_same_time() -> None:
    barrier = asyncio.Barrier(4)

    async def meet(i: int) -> int:
        await barrier.wait()
        return i

    source = FunctionToolSource("t", [FunctionTool(meet, input_schema=ANY_ARGS)])
    dispatcher, toolspace = await _dispatcher(source, call_timeout_s=10)
    results = await dispatcher.run_turn(
        _calls(*[("t__meet", {"i": i}) for i in range(4)]), await toolspace.new_session()
    )
    assert [result.content for result in results] == [0, 1, 2, 3]


async def test_sync_tools_of_one_turn_run_at_the_same_time_up_to_the_concurrency_limit() -> None:
    # More sync calls than asyncio's default executor has threads: they all meet only when the
    # dispatcher's own pool (max_concurrency threads) runs them.
    parties = min(32, (os.cpu_count() or 1) + 4) + 2
    barrier = threading.Barrier(parties, timeout=10)

    def meet(i: int) -> int:
        barrier.wait()
        return i

    source = FunctionToolSource("t", [FunctionTool(meet, input_schema=ANY_ARGS)])
    dispatcher, toolspace = await _dispatcher(
        source,
        call_timeout_s=30,
        max_calls_per_turn=parties,
        max_concurrency=parties,
        per_source_concurrency=parties,
    )
    try:
        results = await dispatcher.run_turn(
            _calls(*[("t__meet", {"i": i}) for i in range(parties)]),
            await toolspace.new_session(),
        )
    finally:
        dispatcher.close()
    assert [result.error for result in results] == [None] * parties
    assert [result.content for result in results] == list(range(parties))


async def test_global_concurrency_limit_is_respected() -> None:
    counter = InFlight()
    source = FunctionToolSource("t", [counter.tool("t", "work")])
    dispatcher, toolspace = await _dispatcher(source, max_concurrency=3, max_calls_per_turn=10)
    results = await dispatcher.run_turn(
        _calls(*[("t__work", {"i": i}) for i in range(10)]), await toolspace.new_session()
    )
    assert all(result.ok for result in results)
    assert counter.calls["work"] == 10
    assert counter.peak["all"] == 3


async def test_per_source_concurrency_limit_is_respected() -> None:
    counter = InFlight()
    sources = [FunctionToolSource(name, [counter.tool(name, "work")]) for name in ("a", "b")]
    dispatcher, toolspace = await _dispatcher(
        *sources, per_source_concurrency=2, max_calls_per_turn=12
    )
    calls = _calls(*[(f"{name}__work", {"i": i}) for i in range(6) for name in ("a", "b")])
    results = await dispatcher.run_turn(calls, await toolspace.new_session())
    assert all(result.ok for result in results)
    assert counter.peak["a"] == counter.peak["b"] == 2
    assert counter.peak["all"] == 4


async def test_calls_past_the_per_turn_limit_do_not_run() -> None:
    counter = InFlight()
    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("t", [counter.tool("t", "work")]), max_calls_per_turn=2
    )
    results = await dispatcher.run_turn(
        _calls(*[("t__work", {"i": i}) for i in range(4)]), await toolspace.new_session()
    )
    assert [result.error_kind for result in results] == [
        None,
        None,
        ToolErrorKind.TOO_MANY_CALLS,
        ToolErrorKind.TOO_MANY_CALLS,
    ]
    assert counter.calls["work"] == 2
    assert "call #3 was not run" in results[2].error


async def test_unknown_tool_gets_close_name_suggestions() -> None:
    source = FunctionToolSource(
        "weather", [FunctionTool(lambda city: city, name="forecast", input_schema=CITY)]
    )
    dispatcher, toolspace = await _dispatcher(source)
    (result,) = await dispatcher.run_turn(
        _calls(("weather__forcast", {"city": "x"})), await toolspace.new_session()
    )
    assert result.error_kind is ToolErrorKind.UNKNOWN_TOOL
    assert "Did you mean: forecast" in result.error
    assert result.observation()["error"]["type"] == "unknown_tool"


async def test_unloaded_tool_tells_the_model_to_search_first() -> None:
    counter = InFlight()
    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("t", [counter.tool("t", "work")]), preload=False
    )
    (result,) = await dispatcher.run_turn(_calls(("t__work", {})), await toolspace.new_session())
    assert result.error_kind is ToolErrorKind.UNLOADED_TOOL
    assert "search_tools" in result.error and 'inspect_tool(name="t__work")' in result.error
    assert counter.calls["work"] == 0


async def test_schema_invalid_arguments_are_rejected_before_dispatch() -> None:
    ran: list[str] = []

    def forecast(city: str) -> str:
        ran.append(city)
        return city

    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("w", [FunctionTool(forecast, input_schema=CITY)])
    )
    results = await dispatcher.run_turn(
        _calls(("w__forecast", {"city": 5}), ("w__forecast", {})), await toolspace.new_session()
    )
    assert [result.error_kind for result in results] == [ToolErrorKind.INVALID_ARGUMENTS] * 2
    assert "arguments.city: 5 is not of type 'string'" in results[0].error
    assert "'city' is a required property" in results[1].error
    assert ran == []


async def test_a_raising_tool_becomes_a_tool_error() -> None:
    def explode(reason: str) -> None:
        raise ValueError(f"bad {reason}")

    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("t", [FunctionTool(explode, input_schema=ANY_ARGS)])
    )
    (result,) = await dispatcher.run_turn(
        _calls(("t__explode", {"reason": "input"})), await toolspace.new_session()
    )
    assert result.error_kind is ToolErrorKind.TOOL_ERROR
    assert result.error == "ValueError: bad input"


async def test_a_tool_that_cancels_itself_is_reported_as_cancelled() -> None:
    async def give_up() -> None:
        raise asyncio.CancelledError

    dispatcher, toolspace = await _dispatcher(FunctionToolSource("t", [FunctionTool(give_up)]))
    (result,) = await dispatcher.run_turn(_calls(("t__give_up", {})), await toolspace.new_session())
    assert result.error_kind is ToolErrorKind.CANCELLED


async def test_unavailable_source_is_reported() -> None:
    server = MCPServer("mem")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    source = MCPToolSource("mem", server)
    dispatcher, toolspace = await _dispatcher(source)
    session = await toolspace.new_session()
    (ok,) = await dispatcher.run_turn(_calls(("mem__echo", {"text": "hi"})), session)
    assert ok.ok
    await source.aclose()
    (result,) = await dispatcher.run_turn(_calls(("mem__echo", {"text": "again"})), session)
    assert result.error_kind is ToolErrorKind.SOURCE_UNAVAILABLE
    assert "mem__echo" in result.error


async def test_a_hanging_call_times_out() -> None:
    async def hang() -> None:
        await asyncio.sleep(3600)

    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("t", [FunctionTool(hang)]), call_timeout_s=0.05
    )
    (result,) = await dispatcher.run_turn(_calls(("t__hang", {})), await toolspace.new_session())
    assert result.error_kind is ToolErrorKind.TIMEOUT
    assert result.error == "no result within 0.05 s"


async def test_cancelling_the_turn_cancels_in_flight_calls() -> None:
    both_running = asyncio.Barrier(3)
    seen: list[str] = []

    async def hang(i: int) -> None:
        try:
            await both_running.wait()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append(f"cancelled {i}")
            raise

    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("t", [FunctionTool(hang, input_schema=ANY_ARGS)]), call_timeout_s=10
    )
    turn = asyncio.create_task(
        dispatcher.run_turn(
            _calls(("t__hang", {"i": 0}), ("t__hang", {"i": 1})), await toolspace.new_session()
        )
    )
    await both_running.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert sorted(seen) == ["cancelled 0", "cancelled 1"]


def _flaky(
    failures: int, error: Exception, annotations: ToolAnnotations, attempts: list[int]
) -> FunctionTool:
    async def flaky() -> str:
        attempts.append(1)
        if len(attempts) <= failures:
            raise error
        return "ok"

    return FunctionTool(flaky, annotations=annotations)


@pytest.mark.parametrize(
    ("annotations", "error", "expected_attempts", "ok"),
    [
        (READ_ONLY, ConnectionError("reset by peer"), 2, True),
        (ToolAnnotations(idempotent=True), ToolExecutionError("HTTP 503 from upstream"), 2, True),
        (DESTRUCTIVE, ConnectionError("reset by peer"), 1, False),
        (ToolAnnotations(), ConnectionError("reset by peer"), 1, False),
        (READ_ONLY, ValueError("bad input"), 1, False),
    ],
    ids=[
        "read-only-transient",
        "idempotent-503",
        "destructive",
        "unannotated",
        "read-only-permanent",
    ],
)
async def test_only_read_only_or_idempotent_tools_are_retried_on_transient_errors(
    annotations: ToolAnnotations, error: Exception, expected_attempts: int, ok: bool
) -> None:
    attempts: list[int] = []
    source = FunctionToolSource("t", [_flaky(1, error, annotations, attempts)])
    dispatcher, toolspace = await _dispatcher(source, retry_backoff_s=0.001, dedup=False)
    (result,) = await dispatcher.run_turn(_calls(("t__flaky", {})), await toolspace.new_session())
    assert len(attempts) == expected_attempts
    assert result.ok is ok
    if not ok:
        assert result.error_kind is ToolErrorKind.TOOL_ERROR
        assert type(error).__name__ in result.error


async def test_a_read_only_call_that_keeps_timing_out_is_retried_then_reported() -> None:
    attempts: list[int] = []

    async def slow() -> None:
        attempts.append(1)
        await asyncio.sleep(3600)

    source = FunctionToolSource("t", [FunctionTool(slow, annotations=READ_ONLY)])
    dispatcher, toolspace = await _dispatcher(
        source, call_timeout_s=0.02, read_only_retries=2, retry_backoff_s=0.001
    )
    (result,) = await dispatcher.run_turn(_calls(("t__slow", {})), await toolspace.new_session())
    assert len(attempts) == 3
    assert result.error_kind is ToolErrorKind.TIMEOUT
    assert result.error.endswith("(after 3 attempts)")


class RateLimitError(Exception):
    """An SDK-style error class whose name says 429."""


class HTTPStatusError(Exception):
    """An SDK-style error carrying its status code."""

    def __init__(self, status_code: int) -> None:
        super().__init__("request failed")
        self.status_code = status_code


def _caused(error: Exception, cause: Exception) -> Exception:
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (TimeoutError(), True),
        (ConnectionResetError(), True),
        (OSError("network unreachable"), True),
        (RateLimitError("slow down"), True),
        (HTTPStatusError(503), True),
        (HTTPStatusError(404), False),
        (RuntimeError("server said 429 Too Many Requests"), True),
        (RuntimeError("user 5030 not found"), False),
        (_caused(ToolExecutionError("call failed"), ConnectionRefusedError()), True),
        (FileNotFoundError("x.txt"), False),
        (ValueError("bad"), False),
    ],
)
def test_transient_error_rule(error: Exception, transient: bool) -> None:
    assert is_transient_error(error) is transient


async def test_identical_read_only_calls_run_once_per_turn_and_are_cached_across_turns() -> None:
    counter = InFlight()
    source = FunctionToolSource(
        "t", [counter.tool("t", "read", annotations=READ_ONLY), counter.tool("t", "write")]
    )
    dispatcher, toolspace = await _dispatcher(source)
    session = await toolspace.new_session()
    turn = _calls(
        ("t__read", {"q": 1}),
        ("t__read", {"q": 1}),
        ("t__read", {"q": 2}),
        ("t__write", {"q": 1}),
        ("t__write", {"q": 1}),
    )
    finished: list[str] = []
    results = await dispatcher.run_turn(
        turn, session, on_finish=lambda result: finished.append(result.call_id)
    )
    assert counter.calls == {"read": 2, "write": 2}
    assert [result.cached for result in results] == [False, True, False, False, False]
    assert results[1].content == results[0].content and results[1].call_id == "c1"
    assert sorted(finished) == ["c0", "c1", "c2", "c3", "c4"]

    again = await dispatcher.run_turn(
        _calls(("t__read", {"q": 2}), ("t__write", {"q": 1})), session
    )
    assert counter.calls == {"read": 2, "write": 3}
    assert (
        again[0].cached
        and again[0].content == {"name": "read", "q": 2}
        and again[0].call_id == "c0"
    )
    assert not again[1].cached

    fresh = await dispatcher.run_turn(_calls(("t__read", {"q": 2})), await toolspace.new_session())
    assert not fresh[0].cached and counter.calls["read"] == 3


async def test_calls_of_one_tool_under_its_other_names_are_deduplicated() -> None:
    counter = InFlight()
    source = FunctionToolSource("t", [counter.tool("t", "get-weather", annotations=READ_ONLY)])
    dispatcher, toolspace = await _dispatcher(source)
    session = await toolspace.new_session()
    spellings = ["get-weather", "get_weather", "t__get_weather"]
    assert {toolspace.resolve(name) for name in spellings} == {"get-weather"}
    results = await dispatcher.run_turn(
        _calls(*((name, {"city": "Oslo"}) for name in spellings)), session
    )
    assert counter.calls == {"get-weather": 1}
    assert [(result.name, result.cached) for result in results] == [
        ("get-weather", False),
        ("get_weather", True),
        ("t__get_weather", True),
    ]
    again = await dispatcher.run_turn(_calls(("get_weather", {"city": "Oslo"})), session)
    assert counter.calls == {"get-weather": 1}
    assert again[0].cached and again[0].name == "get_weather"
    assert again[0].content == {"name": "get-weather", "city": "Oslo"}


async def test_dedup_can_be_switched_off_and_failures_are_not_cached() -> None:
    counter = InFlight()
    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("t", [counter.tool("t", "read", annotations=READ_ONLY)]), dedup=False
    )
    session = await toolspace.new_session()
    await dispatcher.run_turn(_calls(("t__read", {}), ("t__read", {})), session)
    assert counter.calls["read"] == 2

    attempts: list[int] = []
    source = FunctionToolSource("f", [_flaky(2, ValueError("once"), READ_ONLY, attempts)])
    dispatcher, toolspace = await _dispatcher(source)
    session = await toolspace.new_session()
    first = await dispatcher.run_turn(_calls(("f__flaky", {})), session)
    second = await dispatcher.run_turn(_calls(("f__flaky", {})), session)
    third = await dispatcher.run_turn(_calls(("f__flaky", {})), session)
    assert [first[0].ok, second[0].ok, third[0].ok] == [False, False, True]
    assert not third[0].cached


@pytest.mark.parametrize(
    "payload", ["x" * 5000, '"quoted" \\ ' * 500, list(range(2000)), {"k": "é" * 3000}]
)
async def test_oversized_results_are_truncated_to_json_safe_previews(payload: Any) -> None:
    dispatcher, toolspace = await _dispatcher(
        FunctionToolSource("t", [FunctionTool(lambda: payload, name="big")]), max_result_chars=300
    )
    (result,) = await dispatcher.run_turn(_calls(("t__big", {})), await toolspace.new_session())
    assert result.ok and result.truncated
    assert result.content["truncated"] is True
    assert result.content["original_chars"] == len(json.dumps(payload, ensure_ascii=False))
    assert len(json.dumps(result.content, ensure_ascii=False)) <= 300
    assert json.dumps(payload, ensure_ascii=False).startswith(result.content["preview"])
    assert len(result.content["preview"]) > 100


async def test_small_results_pass_unchanged_and_non_json_values_become_json() -> None:
    class Point:
        def __str__(self) -> str:
            return "Point(1, 2)"

    tools = [
        FunctionTool(lambda: {"a": [1, 2]}, name="small"),
        FunctionTool(lambda: {"p": Point()}, name="odd"),
    ]
    dispatcher, toolspace = await _dispatcher(FunctionToolSource("t", tools))
    small, odd = await dispatcher.run_turn(
        _calls(("t__small", {}), ("t__odd", {})), await toolspace.new_session()
    )
    assert small.content == {"a": [1, 2]} and not small.truncated
    assert odd.content == {"p": "Point(1, 2)"} and not odd.truncated


async def test_search_tools_loads_found_tools_for_later_turns() -> None:
    tools = [
        FunctionTool(
            lambda city: f"sunny in {city}",
            name="forecast",
            description="Weather forecast for a city",
            input_schema=CITY,
        ),
        FunctionTool(lambda: "ok", name="restart_server", description="Restart a server"),
    ]
    dispatcher, toolspace = await _dispatcher(FunctionToolSource("w", tools), preload=False)
    session = await toolspace.new_session()
    assert session.loaded == set()
    (found,) = await dispatcher.run_turn(
        _calls(("search_tools", {"query": "weather forecast", "top_k": 1})), session
    )
    assert found.ok
    assert found.content == [
        {
            "name": "forecast",
            "description": "Weather forecast for a city",
            "parameters": ["city"],
        }
    ]
    assert session.loaded == {"forecast"}
    called, unloaded = await dispatcher.run_turn(
        _calls(("forecast", {"city": "Oslo"}), ("restart_server", {})), session
    )
    assert called.content == "sunny in Oslo"
    assert unloaded.error_kind is ToolErrorKind.UNLOADED_TOOL


async def test_inspect_tool_returns_the_schema_and_loads_the_tool() -> None:
    tools = [
        FunctionTool(
            lambda city: city,
            name="forecast",
            description="Forecast",
            input_schema=CITY,
            annotations=READ_ONLY,
        )
    ]
    dispatcher, toolspace = await _dispatcher(FunctionToolSource("w", tools), preload=False)
    session = await toolspace.new_session()
    inspected, missing = await dispatcher.run_turn(
        _calls(("inspect_tool", {"name": "w__forecast"}), ("inspect_tool", {"name": "w__forcast"})),
        session,
    )
    assert inspected.content == {
        "name": "forecast",
        "description": "Forecast",
        "parameters": CITY,
        "annotations": {"read_only": True, "destructive": False},
    }
    assert session.loaded == {"forecast"}
    assert missing.error_kind is ToolErrorKind.UNKNOWN_TOOL and "forecast" in missing.error


async def test_meta_tool_arguments_are_validated() -> None:
    dispatcher, toolspace = await _dispatcher(FunctionToolSource("w", []))
    results = await dispatcher.run_turn(
        _calls(
            ("search_tools", {"query": "x", "top_k": 50}),
            ("search_tools", {}),
            ("inspect_tool", {"name": 3}),
        ),
        await toolspace.new_session(),
    )
    assert [result.error_kind for result in results] == [ToolErrorKind.INVALID_ARGUMENTS] * 3
    assert "arguments.top_k: 50 is greater than the maximum of 20" in results[0].error


async def test_a_turn_mixing_every_failure_never_raises() -> None:
    def boom() -> None:
        raise RuntimeError("boom")

    tools = [
        FunctionTool(boom),
        FunctionTool(lambda city: city, name="forecast", input_schema=CITY),
    ]
    dispatcher, toolspace = await _dispatcher(FunctionToolSource("t", tools), max_calls_per_turn=5)
    calls = _calls(
        ("t__boom", {}),
        ("nope", {}),
        ("t__forecast", {"city": 1}),
        ("t__forecast", {"city": "a"}),
        ("search_tools", {"query": "forecast"}),
        ("t__boom", {}),
    )
    results = await dispatcher.run_turn(calls, await toolspace.new_session())
    assert [result.error_kind for result in results] == [
        ToolErrorKind.TOOL_ERROR,
        ToolErrorKind.UNKNOWN_TOOL,
        ToolErrorKind.INVALID_ARGUMENTS,
        None,
        None,
        ToolErrorKind.TOO_MANY_CALLS,
    ]
    assert [result.call_id for result in results] == [call.id for call in calls]


async def test_empty_turn_returns_no_results() -> None:
    dispatcher, toolspace = await _dispatcher(FunctionToolSource("t", []))
    assert await dispatcher.run_turn([], await toolspace.new_session()) == []


@pytest.mark.parametrize(
    "bad",
    [
        {"max_calls_per_turn": 0},
        {"call_timeout_s": 0},
        {"max_concurrency": 0},
        {"read_only_retries": -1},
        {"max_result_chars": 0},
    ],
)
def test_config_rejects_unusable_values(bad: dict[str, Any]) -> None:
    (field,) = bad
    with pytest.raises(ConfigError, match=field):
        DispatchConfig(**bad)


async def test_time_spent_queueing_for_a_slot_does_not_count_towards_the_timeout() -> None:
    async def hold() -> None:
        await asyncio.Event().wait()  # never set: holds the source's one slot until timed out

    async def answer() -> str:
        return "answered"  # never yields: it cannot time out once it holds the slot

    source = FunctionToolSource("t", [FunctionTool(hold), FunctionTool(answer)])
    dispatcher, toolspace = await _dispatcher(source, per_source_concurrency=1, call_timeout_s=0.05)
    # The last call queues for two whole timeouts behind the holders.
    results = await dispatcher.run_turn(
        _calls(("t__hold", {}), ("t__hold", {}), ("t__answer", {})),
        await toolspace.new_session(),
    )
    assert [result.error_kind for result in results] == [ToolErrorKind.TIMEOUT] * 2 + [None]
    assert results[2].content == "answered"

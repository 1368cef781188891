"""OpenAICompatiblePolicy against the real serve-model server.

And against misbehaving real servers.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from paraagent_runtime.actions import render_observations, turn_from_openai
from paraagent_runtime.errors import ConfigError, ModelAPIError
from paraagent_runtime.policy import (
    Completion,
    Message,
    OpenAICompatiblePolicy,
    SamplingParams,
    ScriptedPolicy,
    TransformersPolicy,
)
from paraagent_runtime.policy.openai_http import to_openai_messages
from paraagent_runtime.policy.server import ModelServer
from paraagent_runtime.tools import ToolResult

USER = [Message(role="system", content="You are terse."), Message(role="user", content="Say hi.")]
SHORT = SamplingParams(max_tokens=6)


@pytest.fixture
async def tiny_server(
    tiny_model_dir: Path,
) -> AsyncIterator[tuple[ModelServer, TransformersPolicy]]:
    policy = TransformersPolicy(tiny_model_dir, model_name="tiny")
    async with ModelServer(policy, port=0) as server:
        yield server, policy


@pytest.mark.parametrize("stream", [True, False])
async def test_completion_through_serve_model_matches_the_local_policy(
    tiny_server, stream: bool
) -> None:
    server, local = tiny_server
    deltas: list[str] = []
    async with OpenAICompatiblePolicy(
        server.base_url, "tiny", stream=stream, logprobs=True, extra_body={"return_token_ids": True}
    ) as remote:
        completion = await remote.complete(USER, sampling=SHORT, on_text=deltas.append)
    direct = await local.complete(USER, sampling=SHORT)
    assert completion.text == direct.text
    assert "".join(deltas) == completion.text
    assert completion.token_ids == direct.token_ids
    assert completion.prompt_token_ids == direct.prompt_token_ids
    assert completion.logprobs == pytest.approx(direct.logprobs, abs=1e-4)
    assert completion.finish_reason == direct.finish_reason == "length"
    assert (completion.prompt_tokens, completion.completion_tokens) == (
        len(direct.prompt_token_ids),
        6,
    )
    assert completion.model == "tiny"


async def test_token_ids_are_absent_unless_asked_for(tiny_server) -> None:
    server, _ = tiny_server
    async with OpenAICompatiblePolicy(server.base_url, "tiny", stream=False) as remote:
        completion = await remote.complete(USER, sampling=SamplingParams(max_tokens=3))
    assert completion.token_ids is None and completion.logprobs is None
    assert completion.completion_tokens == 3


TOOL_CALLS = [
    {
        "id": "call_a",
        "type": "function",
        "function": {"name": "search_tools", "arguments": '{"query": "weather"}'},
    },
    {
        "id": "call_b",
        "type": "function",
        "function": {"name": "search_tools", "arguments": '{"query": "flights"}'},
    },
]


@pytest.mark.parametrize("stream", [True, False])
async def test_structured_tool_calls_round_trip(stream: bool) -> None:
    scripted = ScriptedPolicy([Completion(text="<phase>explore</phase>", tool_calls=TOOL_CALLS)])
    tools = [
        {"type": "function", "function": {"name": "search_tools", "parameters": {"type": "object"}}}
    ]
    async with ModelServer(scripted, port=0) as server:
        async with OpenAICompatiblePolicy(server.base_url, "scripted", stream=stream) as remote:
            completion = await remote.complete(USER, tools=tools)
    assert completion.tool_calls == TOOL_CALLS
    assert completion.finish_reason == "tool_calls"
    assert scripted.tools_seen == [tools]
    turn = turn_from_openai(completion.text, completion.tool_calls)
    assert turn.phase == "explore"
    assert [call.arguments["query"] for call in turn.calls] == ["weather", "flights"]


async def test_streamed_tool_call_fragments_are_accumulated() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        deltas = [
            {"role": "assistant", "content": "<phase>execute</phase>"},
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c0",
                        "type": "function",
                        "function": {"name": "w__get", "arguments": ""},
                    }
                ]
            },
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f__get", "arguments": "{}"},
                    }
                ]
            },
            {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
        ]
        for delta in deltas:
            chunk = {"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        final = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
        await response.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
        return response

    async with _serve(handler) as url, OpenAICompatiblePolicy(url, "m") as policy:
        completion = await policy.complete(USER)
    assert completion.text == "<phase>execute</phase>"
    assert [call["function"] for call in completion.tool_calls] == [
        {"name": "w__get", "arguments": '{"city": "Paris"}'},
        {"name": "f__get", "arguments": "{}"},
    ]
    assert [call["id"] for call in completion.tool_calls] == ["c0", "c1"]


def test_tool_messages_after_structured_calls_are_split_per_call() -> None:
    results = [
        ToolResult(call_id="call_b", name="search_tools", content={"hits": 2}),
        ToolResult(call_id="call_a", name="search_tools", content="plain"),
    ]
    messages = [
        *USER,
        Message(role="assistant", content="", tool_calls=TOOL_CALLS),
        Message(role="tool", content=render_observations(results)),
        Message(role="assistant", content="<answer>done</answer>"),
        Message(role="tool", content="text-mode observations stay as they are"),
    ]
    converted = to_openai_messages(messages)
    assert converted[2]["tool_calls"] == TOOL_CALLS
    assert converted[3] == {"role": "tool", "tool_call_id": "call_b", "content": '{"hits": 2}'}
    assert converted[4] == {"role": "tool", "tool_call_id": "call_a", "content": "plain"}
    assert converted[6] == {"role": "tool", "content": "text-mode observations stay as they are"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_server_down_is_a_readable_model_api_error() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    async with OpenAICompatiblePolicy(url, "m") as policy:
        with pytest.raises(
            ModelAPIError,
            match=r"cannot reach the model server at http://127\.0\.0\.1:\d+/v1/chat/completions",
        ) as info:
            await policy.complete(USER)
    assert "\n" not in str(info.value)
    assert info.value.__cause__ is not None


class _serve:
    """A real aiohttp server answering every chat-completions request with ``handler``."""

    def __init__(self, handler) -> None:
        self.handler = handler
        self.runner: web.AppRunner | None = None

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.handler)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        port = _free_port()
        await web.TCPSite(self.runner, "127.0.0.1", port).start()
        return f"http://127.0.0.1:{port}/v1"

    async def __aexit__(self, *exc_info: object) -> None:
        await self.runner.cleanup()


def _responder(status: int = 200, body: str = "", content_type: str = "application/json"):
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, text=body, content_type=content_type)

    return handler


def _sse(*events: str, close_early: bool = False):
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in events:
            await response.write(f"data: {event}\n\n".encode())
        return response

    return handler


CHUNK = json.dumps({"choices": [{"index": 0, "delta": {"content": "par"}, "finish_reason": None}]})


@pytest.mark.parametrize(
    ("handler", "stream", "message"),
    [
        (
            _responder(500, '{"error": {"message": "CUDA out of memory"}}'),
            False,
            r"HTTP 500: CUDA out of memory",
        ),
        (_responder(404, '{"detail": "Not Found"}'), True, r"HTTP 404: Not Found"),
        (
            _responder(400, "plain text failure", "text/plain"),
            False,
            r"HTTP 400: plain text failure",
        ),
        (
            _responder(200, "<html>hello</html>", "text/html"),
            False,
            r"non-JSON response: <html>hello</html>",
        ),
        (_responder(200, "<html>hello</html>", "text/html"), True, r"non-JSON response"),
        (_responder(200, '{"object": "chat.completion"}'), False, r"no choices"),
        (_responder(200, '{"choices": []}'), False, r"no choices"),
        (_responder(200, '{"choices": [{"index": 0}]}'), False, r"choice without a message"),
        (
            _responder(200, '{"error": {"message": "model busy"}}'),
            False,
            r"returned an error: model busy",
        ),
        (_sse(CHUNK), True, r"ended the stream before the answer was complete"),
        (_sse(CHUNK, "{broken json"), True, r"malformed stream event: \{broken json"),
        (
            _sse(CHUNK, '{"error": {"message": "engine died"}}'),
            True,
            r"failed mid-stream: engine died",
        ),
        (_sse(), True, r"empty stream"),
    ],
)
async def test_misbehaving_servers_raise_model_api_error(
    handler, stream: bool, message: str
) -> None:
    async with _serve(handler) as url, OpenAICompatiblePolicy(url, "m", stream=stream) as policy:
        with pytest.raises(ModelAPIError, match=message) as info:
            await policy.complete(USER)
    assert "\n" not in str(info.value)


async def test_slow_server_times_out() -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.json_response({})

    async with _serve(slow) as url, OpenAICompatiblePolicy(url, "m", timeout_s=0.3) as policy:
        with pytest.raises(ModelAPIError, match=r"did not answer within 0\.3 s"):
            await policy.complete(USER)


async def test_request_body_carries_sampling_tools_and_extra_body() -> None:
    seen: list[dict] = []

    async def capture(request: web.Request) -> web.Response:
        seen.append(await request.json())
        seen.append(dict(request.headers))
        return web.json_response(
            {"choices": [{"index": 0, "message": {"content": "ok"}, "finish_reason": "stop"}]}
        )

    tools = [{"type": "function", "function": {"name": "t"}}]
    sampling = SamplingParams(max_tokens=9, temperature=0.5, stop=["</answer>"], seed=4)
    async with (
        _serve(capture) as url,
        OpenAICompatiblePolicy(
            url,
            "m",
            api_key="sk-test",
            stream=False,
            extra_body={"chat_template_kwargs": {"enable_thinking": False}},
        ) as policy,
    ):
        completion = await policy.complete(USER, sampling=sampling, tools=tools)
    body, headers = seen
    assert completion.text == "ok"
    assert body["max_tokens"] == 9 and body["temperature"] == 0.5 and body["seed"] == 4
    assert body["stop"] == ["</answer>"] and body["tools"] == tools and body["stream"] is False
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert headers["Authorization"] == "Bearer sk-test"


def test_constructor_rejects_bad_settings() -> None:
    with pytest.raises(ConfigError, match="http://"):
        OpenAICompatiblePolicy("127.0.0.1:8000/v1", "m")
    with pytest.raises(ConfigError, match="timeout_s"):
        OpenAICompatiblePolicy("http://127.0.0.1:8000/v1", "m", timeout_s=0)

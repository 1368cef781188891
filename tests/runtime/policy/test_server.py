"""The serve-model server's own surface: models, health, request validation, policy failures."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from paraagent_runtime.policy import ScriptedPolicy
from paraagent_runtime.policy.server import ModelServer

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
async def server() -> AsyncIterator[ModelServer]:
    async with ModelServer(
        ScriptedPolicy(["<answer>one</answer>"]), port=0, model_name="demo"
    ) as running:
        yield running


async def _post(server: ModelServer, body: object | bytes) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{server.base_url}/chat/completions", data=data) as response:
            return response.status, await response.json(content_type=None)


async def test_models_and_health(server: ModelServer) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{server.base_url}/models") as response:
            models = await response.json()
        async with session.get(f"http://{server.host}:{server.port}/health") as response:
            health = await response.json()
    assert [model["id"] for model in models["data"]] == ["demo"]
    assert health == {"status": "ok"}


async def test_plain_completion_has_the_openai_shape(server: ModelServer) -> None:
    status, body = await _post(server, {"model": "demo", "messages": MESSAGES, "max_tokens": 5})
    assert status == 200
    assert body["object"] == "chat.completion" and body["model"] == "demo"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "<answer>one</answer>"}
    assert body["choices"][0]["finish_reason"] == "stop"
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


async def test_content_parts_and_developer_role_are_accepted() -> None:
    policy = ScriptedPolicy(["ok"])
    messages = [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    async with ModelServer(policy, port=0) as running:
        status, _ = await _post(running, {"messages": messages})
    assert status == 200
    assert [(m.role, m.content) for m in policy.calls[0]] == [
        ("system", "be brief"),
        ("user", "ab"),
    ]


@pytest.mark.parametrize(
    ("body", "param", "fragment"),
    [
        (b"{not json", None, "not valid JSON"),
        ({"model": "demo"}, "messages", "Field required"),
        ({"messages": []}, "messages", "at least 1"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages.0.role", "Input should be"),
        ({"messages": MESSAGES, "max_tokens": 0}, "max_tokens", "greater than or equal to 1"),
        ({"messages": MESSAGES, "temperature": -1}, "temperature", "greater than or equal to 0"),
        ({"messages": MESSAGES, "n": 2}, "n", "Input should be 1"),
        ({"messages": MESSAGES, "stop": 5}, "stop", None),
    ],
)
async def test_malformed_requests_get_openai_style_400(
    server: ModelServer, body, param, fragment
) -> None:
    status, payload = await _post(server, body)
    assert status == 400
    error = payload["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] is None if param is None else error["param"].startswith(param)
    if fragment:
        assert fragment in error["message"]


async def test_policy_failure_is_a_500_with_the_reason() -> None:
    async with ModelServer(ScriptedPolicy([]), port=0) as running:
        status, payload = await _post(running, {"messages": MESSAGES})
    assert status == 500
    assert payload["error"]["type"] == "server_error"
    assert "no turn left" in payload["error"]["message"]


async def test_streamed_policy_failure_is_an_error_event() -> None:
    async with ModelServer(ScriptedPolicy([]), port=0) as running:
        async with aiohttp.ClientSession() as session:
            body = {"messages": MESSAGES, "stream": True}
            async with session.post(f"{running.base_url}/chat/completions", json=body) as response:
                text = await response.text()
    events = [
        line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: ")
    ]
    assert json.loads(events[-1])["error"]["message"].startswith(
        "the scripted policy has no turn left"
    )
    assert "[DONE]" not in events


async def test_streamed_usage_chunk_when_asked(server: ModelServer) -> None:
    body = {"messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{server.base_url}/chat/completions", json=body) as response:
            assert response.content_type == "text/event-stream"
            text = await response.text()
    events = [
        line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: ")
    ]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert content == "<answer>one</answer>"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 0


async def test_another_model_name_is_refused_with_an_openai_style_404(server: ModelServer) -> None:
    status, payload = await _post(server, {"model": "gpt-4o", "messages": MESSAGES})
    assert status == 404
    assert payload["error"] == {
        "message": "the model 'gpt-4o' does not exist here; this server serves 'demo'",
        "type": "invalid_request_error",
        "param": "model",
        "code": "model_not_found",
    }


async def test_an_alias_is_served_under_the_served_name() -> None:
    policy = ScriptedPolicy(["<answer>one</answer>"])
    async with ModelServer(policy, port=0, model_name="demo", aliases=["paraagent"]) as running:
        status, body = await _post(running, {"model": "paraagent", "messages": MESSAGES})
        assert "'demo' (also accepted as 'paraagent')" in running.announcement()
    assert status == 200 and body["model"] == "demo"


async def test_the_announcement_names_the_address_and_every_route(server: ModelServer) -> None:
    text = server.announcement()
    root = f"http://{server.host}:{server.port}"
    assert f"serving model 'demo' at {root}/v1" in text
    for route in ("POST {}/v1/chat/completions", "GET {}/v1/models", "GET {}/health"):
        assert route.format(root) in text


async def test_a_busy_port_is_a_config_error(server: ModelServer) -> None:
    from paraagent_runtime.errors import ConfigError

    with pytest.raises(ConfigError, match=rf"cannot listen on 127\.0\.0\.1:{server.port}: "):
        async with ModelServer(ScriptedPolicy([]), port=server.port):
            pass

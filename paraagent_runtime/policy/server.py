"""``paraagent serve-model``: an OpenAI-compatible chat-completions server over any :class:`Policy`.

Normally it serves a local model (:class:`~paraagent_runtime.policy.ort_genai.OnnxGenAIPolicy`
on the CPU when ONNX Runtime GenAI is installed, else
:class:`~paraagent_runtime.policy.transformers_local.TransformersPolicy`) so anything that speaks
the OpenAI API (including :class:`OpenAICompatiblePolicy` and ToolEnv's LLM simulation) can use a
CPU model. Endpoints (:data:`ROUTES`): ``POST /v1/chat/completions`` (plain and SSE
streaming, ``logprobs``, ``max_tokens``, ``temperature``, ``top_p``, ``seed``, ``stop``, vLLM's
``return_token_ids``), ``GET /v1/models`` and ``GET /health``. Malformed requests get a 400 with
an OpenAI-style error body; a request for a model the server does not serve gets a 404
(``model_not_found``), as OpenAI answers. A request without ``model`` gets the served model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, Protocol, Self, runtime_checkable

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError, ModelAPIError
from .base import Completion, Message, Policy, SamplingParams

__all__ = ["ROUTES", "ModelServer", "TokenTexts", "create_app", "serve"]

logger = logging.getLogger(__name__)

_POLICY = web.AppKey("policy", Policy)
_MODEL_NAME = web.AppKey("model_name", str)
_ACCEPTED = web.AppKey("accepted_names", frozenset)

ROUTES: tuple[tuple[str, str], ...] = (
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/models"),
    ("GET", "/health"),
)
"""The server's routes (method, path)."""


@runtime_checkable
class TokenTexts(Protocol):
    """A policy that can show its token ids as text (used for ``logprobs.content[].token``)."""

    def token_texts(self, token_ids: Sequence[int]) -> list[str]:
        """The text of each token id."""


class _ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str = "text"
    text: str = ""


class _RequestMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[_ContentPart] | None = None
    tool_calls: list[dict[str, Any]] | None = None

    def to_message(self) -> Message:
        content = self.content
        if isinstance(content, list):
            content = "".join(part.text for part in content if part.type == "text")
        role = "system" if self.role == "developer" else self.role
        return Message(role=role, content=content or "", tool_calls=self.tool_calls)


class ChatRequest(BaseModel):
    """The accepted subset of an OpenAI chat-completions request (unknown fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    model: str = ""
    messages: list[_RequestMessage] = Field(min_length=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int | None = None
    stop: str | list[str] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    logprobs: bool = False
    tools: list[dict[str, Any]] | None = None
    n: Literal[1] = 1
    return_token_ids: bool = False

    def sampling(self) -> SamplingParams:
        """The request's decoding settings."""
        stop = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        max_tokens = self.max_completion_tokens or self.max_tokens
        params = SamplingParams(
            temperature=self.temperature, top_p=self.top_p, stop=stop, seed=self.seed
        )
        return params.model_copy(update={"max_tokens": max_tokens}) if max_tokens else params


def _error(
    status: int,
    message: str,
    *,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | int | None = None,
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code or status}}
    return web.json_response(body, status=status)


def _validation_message(exc: ValidationError) -> tuple[str, str | None]:
    first = exc.errors()[0]
    param = ".".join(str(part) for part in first.get("loc", ())) or None
    return f"{param}: {first.get('msg')}" if param else str(first.get("msg")), param


class _Responder:
    """Builds the response objects of one request."""

    def __init__(self, policy: Policy, model_name: str, request: ChatRequest) -> None:
        self.policy = policy
        self.request = request
        self.model = model_name
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def _envelope(self, kind: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }

    def logprobs(self, completion: Completion) -> dict[str, Any] | None:
        if not self.request.logprobs or completion.logprobs is None:
            return None
        ids = completion.token_ids or []
        if isinstance(self.policy, TokenTexts) and len(ids) == len(completion.logprobs):
            tokens = self.policy.token_texts(ids)
        else:
            tokens = [f"token_id:{token}" for token in ids] or [""] * len(completion.logprobs)
        return {
            "content": [
                {
                    "token": token,
                    "logprob": logprob,
                    "bytes": list(token.encode("utf-8")),
                    "top_logprobs": [],
                }
                for token, logprob in zip(tokens, completion.logprobs, strict=False)
            ]
        }

    def usage(self, completion: Completion) -> dict[str, int]:
        prompt = completion.prompt_tokens or len(completion.prompt_token_ids or [])
        generated = completion.completion_tokens or len(completion.token_ids or [])
        return {
            "prompt_tokens": prompt,
            "completion_tokens": generated,
            "total_tokens": prompt + generated,
        }

    def _choice_extras(self, completion: Completion) -> dict[str, Any]:
        extras: dict[str, Any] = {
            "logprobs": self.logprobs(completion),
            "finish_reason": completion.finish_reason,
        }
        if self.request.return_token_ids:
            extras["token_ids"] = completion.token_ids
        return extras

    def _response_extras(self, completion: Completion) -> dict[str, Any]:
        return (
            {"prompt_token_ids": completion.prompt_token_ids}
            if self.request.return_token_ids
            else {}
        )

    def full(self, completion: Completion) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": completion.text}
        if completion.tool_calls:
            message["tool_calls"] = completion.tool_calls
        choice = {"index": 0, "message": message, **self._choice_extras(completion)}
        return {
            **self._envelope("chat.completion", [choice]),
            "usage": self.usage(completion),
            **self._response_extras(completion),
        }

    def chunk(self, delta: dict[str, Any], **extras: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None, **extras}
        return self._envelope("chat.completion.chunk", [choice])

    def final_chunks(self, completion: Completion) -> list[dict[str, Any]]:
        chunks = [
            self.chunk({"tool_calls": [{"index": index, **call}]})
            for index, call in enumerate(completion.tool_calls or [])
        ]
        chunks.append(
            {
                **self.chunk({}, **self._choice_extras(completion)),
                **self._response_extras(completion),
            }
        )
        if (self.request.stream_options or {}).get("include_usage"):
            chunks.append(
                {**self._envelope("chat.completion.chunk", []), "usage": self.usage(completion)}
            )
        return chunks


async def _chat_completions(http_request: web.Request) -> web.StreamResponse:
    try:
        payload = await http_request.json()
    except (ValueError, UnicodeDecodeError):
        return _error(400, "the request body is not valid JSON")
    try:
        request = ChatRequest.model_validate(payload)
    except ValidationError as exc:
        message, param = _validation_message(exc)
        return _error(400, message, param=param)
    served = http_request.app[_MODEL_NAME]
    if request.model and request.model not in http_request.app[_ACCEPTED]:
        return _error(
            404,
            f"the model {request.model!r} does not exist here; this server serves {served!r}",
            param="model",
            code="model_not_found",
        )
    policy = http_request.app[_POLICY]
    responder = _Responder(policy, served, request)
    messages = [message.to_message() for message in request.messages]
    if not request.stream:
        try:
            completion = await policy.complete(
                messages, sampling=request.sampling(), tools=request.tools
            )
        except ModelAPIError as exc:
            return _error(500, str(exc), kind="server_error")
        return web.json_response(responder.full(completion))
    return await _stream(http_request, policy, responder, messages, request)


async def _stream(
    http_request: web.Request,
    policy: Policy,
    responder: _Responder,
    messages: list[Message],
    request: ChatRequest,
) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(http_request)

    async def send(event: dict[str, Any] | str) -> None:
        data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
        await response.write(f"data: {data}\n\n".encode())

    await send(responder.chunk({"role": "assistant", "content": ""}))

    async def on_text(delta: str) -> None:
        await send(responder.chunk({"content": delta}))

    try:
        completion = await policy.complete(
            messages, sampling=request.sampling(), tools=request.tools, on_text=on_text
        )
    except ModelAPIError as exc:
        await send(
            {"error": {"message": str(exc), "type": "server_error", "param": None, "code": 500}}
        )
        return response
    for chunk in responder.final_chunks(completion):
        await send(chunk)
    await send("[DONE]")
    await response.write_eof()
    return response


async def _models(http_request: web.Request) -> web.Response:
    model = {
        "id": http_request.app[_MODEL_NAME],
        "object": "model",
        "created": 0,
        "owned_by": "paraagent",
    }
    return web.json_response({"object": "list", "data": [model]})


async def _health(_: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


def create_app(policy: Policy, model_name: str, aliases: Iterable[str] = ()) -> web.Application:
    """The aiohttp application serving ``policy`` under the name ``model_name``.

    Args:
        policy: The policy every accepted request goes to.
        model_name: The served name (``/v1/models`` lists it; responses carry it).
        aliases: Other names a request's ``model`` may give (e.g. the policy spec the server
            was started with); any other name is refused with a 404.
    """
    app = web.Application()
    app[_POLICY] = policy
    app[_MODEL_NAME] = model_name
    app[_ACCEPTED] = frozenset({model_name, *aliases})
    handlers = {
        "/v1/chat/completions": _chat_completions,
        "/v1/models": _models,
        "/health": _health,
    }
    for method, path in ROUTES:
        app.router.add_route(method, path, handlers[path])
    return app


class ModelServer:
    """Runs :func:`create_app` on a TCP port for the lifetime of an ``async with`` block.

    Args:
        policy: the policy to serve.
        host: the interface to bind.
        port: the port; 0 picks a free one (read it from :attr:`port`).
        model_name: the served model name; defaults to the policy's ``model_name`` or ``name``.
        aliases: other model names requests may use for it (see :func:`create_app`).
    """

    def __init__(
        self,
        policy: Policy,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        model_name: str | None = None,
        aliases: Iterable[str] = (),
    ) -> None:
        self.policy = policy
        self.host = host
        self.port = port
        self.model_name = model_name or getattr(policy, "model_name", None) or policy.name
        self.aliases = tuple(alias for alias in aliases if alias != self.model_name)
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        """The API root clients use, e.g. ``http://127.0.0.1:8000/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def announcement(self) -> str:
        """What the server says at start: its model, address and routes."""
        also = ", ".join(map(repr, self.aliases))
        aliases = f" (also accepted as {also})" if also else ""
        root = f"http://{self.host}:{self.port}"
        routes = ", ".join(f"{method} {root}{path}" for method, path in ROUTES)
        return (
            f"serving model {self.model_name!r}{aliases} at {self.base_url} "
            f"(OpenAI-compatible; other model names get a 404)\nroutes: {routes}"
        )

    async def start(self) -> None:
        """Bind the port and start answering.

        Raises:
            ConfigError: The address cannot be bound (in use, or not an interface of this host).
        """
        app = create_app(self.policy, self.model_name, self.aliases)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self.stop()
            raise ConfigError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from exc
        server = getattr(site, "_server", None)
        if self.port == 0 and server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]
        logger.info("serving %s at %s", self.model_name, self.base_url)

    async def stop(self) -> None:
        """Stop answering and free the port."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


async def serve(
    policy: Policy,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    model_name: str | None = None,
    aliases: Iterable[str] = (),
    on_ready: Callable[[ModelServer], None] | None = None,
) -> None:
    """Serve ``policy`` until cancelled, then close the server and the policy.

    Args:
        policy: The policy to serve.
        host: The interface to bind.
        port: The port (0: a free one).
        model_name: The served model name (see :class:`ModelServer`).
        aliases: Other model names requests may use for it.
        on_ready: Called once the port is bound (``paraagent serve-model`` announces itself).
    """
    try:
        async with ModelServer(
            policy, host=host, port=port, model_name=model_name, aliases=aliases
        ) as server:
            if on_ready is not None:
                on_ready(server)
            await asyncio.Event().wait()
    finally:
        await policy.aclose()

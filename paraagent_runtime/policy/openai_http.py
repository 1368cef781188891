"""A policy behind an OpenAI-compatible ``/chat/completions`` endpoint (``vllm serve``, …).

Streams over SSE, accumulates structured ``tool_calls`` deltas (what ``vllm serve
--tool-call-parser hermes`` returns), and reads log-probs and token ids when the server returns
them. Every failure becomes a :class:`~paraagent_runtime.errors.ModelAPIError` with a one-line
message; the translation happens in one place, :meth:`OpenAICompatiblePolicy._translate_errors`.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from ..actions import parse_observations
from ..errors import ConfigError, ModelAPIError
from ._callbacks import emit_text
from .base import Completion, Message, Policy, SamplingParams, TextCallback

__all__ = ["OpenAICompatiblePolicy"]

_SNIPPET = 200


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…"


def _server_error_message(body: str) -> str:
    """The error message of an error response, in the shapes servers use, else the raw body."""
    try:
        payload = json.loads(body)
    except ValueError:
        return _snippet(body) or "(empty body)"
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        if isinstance(error, dict):
            for key in ("message", "detail", "msg"):
                if isinstance(error.get(key), str):
                    return _snippet(error[key])
        elif isinstance(error, str):
            return _snippet(error)
        if isinstance(payload.get("detail"), str):
            return _snippet(payload["detail"])
    return _snippet(body)


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Convert the conversation to OpenAI chat messages.

    A ``tool`` message answering an assistant message with structured ``tool_calls`` is split into
    one tool message per call with its ``tool_call_id`` (what strict OpenAI servers require);
    other tool messages pass through unchanged (vLLM and Hermes/Qwen templates render them).
    """
    converted: list[dict[str, Any]] = []
    pending_ids: list[str] = []
    for message in messages:
        if message.role == "tool" and pending_ids:
            observations = parse_observations(message.content)
            if len(observations) == len(pending_ids):
                known = set(pending_ids)
                for position, observation in enumerate(observations):
                    call_id = observation.id if observation.id in known else pending_ids[position]
                    content = observation.content
                    converted.append(
                        {
                            "role": "tool",
                            "tool_call_id": call_id,
                            "content": content if isinstance(content, str) else json.dumps(content),
                        }
                    )
                pending_ids = []
                continue
        entry: dict[str, Any] = {"role": message.role, "content": message.content}
        pending_ids = []
        if message.role == "assistant" and message.tool_calls:
            entry["tool_calls"] = message.tool_calls
            pending_ids = [str(call.get("id", "")) for call in message.tool_calls]
        converted.append(entry)
    return converted


@dataclass
class _ToolCallBuffer:
    """Accumulates one structured tool call from streamed deltas."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def as_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": "".join(self.arguments)},
        }


@dataclass
class _Accumulator:
    """Collects the parts of a response, streamed or not."""

    text: list[str] = field(default_factory=list)
    tool_calls: dict[int, _ToolCallBuffer] = field(default_factory=dict)
    logprobs: list[float] = field(default_factory=list)
    logprob_tokens: list[str] = field(default_factory=list)
    token_ids: list[int] = field(default_factory=list)
    prompt_token_ids: list[int] | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    model: str = ""

    def add_tool_call_delta(self, delta: dict[str, Any]) -> None:
        index = delta.get("index", len(self.tool_calls))
        buffer = self.tool_calls.setdefault(index, _ToolCallBuffer())
        buffer.id = delta.get("id") or buffer.id
        function = delta.get("function") or {}
        buffer.name = function.get("name") or buffer.name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            buffer.arguments.append(arguments)
        elif arguments is not None:
            buffer.arguments.append(json.dumps(arguments))

    def add_logprobs(self, logprobs: Any) -> None:
        if not isinstance(logprobs, dict):
            return
        for entry in logprobs.get("content") or []:
            if isinstance(entry, dict) and isinstance(entry.get("logprob"), int | float):
                self.logprobs.append(float(entry["logprob"]))
                self.logprob_tokens.append(str(entry.get("token", "")))

    def add_choice_extras(self, choice: dict[str, Any]) -> None:
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        self.add_logprobs(choice.get("logprobs"))
        if isinstance(choice.get("token_ids"), list):
            self.token_ids.extend(int(token) for token in choice["token_ids"])

    def add_response_extras(self, payload: dict[str, Any]) -> None:
        if isinstance(payload.get("prompt_token_ids"), list):
            self.prompt_token_ids = [int(token) for token in payload["prompt_token_ids"]]
        if isinstance(payload.get("usage"), dict):
            self.usage = payload["usage"]
        self.model = payload.get("model") or self.model

    def completion(self, latency_s: float) -> Completion:
        token_ids = self.token_ids or self._ids_from_logprob_tokens()
        return Completion(
            text="".join(self.text),
            tool_calls=[self.tool_calls[key].as_openai() for key in sorted(self.tool_calls)]
            or None,
            finish_reason=self.finish_reason,
            prompt_token_ids=self.prompt_token_ids,
            token_ids=token_ids,
            logprobs=self.logprobs or None,
            prompt_tokens=int(self.usage.get("prompt_tokens") or 0),
            completion_tokens=int(self.usage.get("completion_tokens") or 0),
            model=self.model,
            latency_s=latency_s,
        )

    def _ids_from_logprob_tokens(self) -> list[int] | None:
        """Token ids from ``token_id:<n>`` logprob tokens (vLLM ``return_tokens_as_token_ids``)."""
        if not self.logprob_tokens or not all(
            t.startswith("token_id:") for t in self.logprob_tokens
        ):
            return None
        try:
            return [int(token.removeprefix("token_id:")) for token in self.logprob_tokens]
        except ValueError:
            return None


class OpenAICompatiblePolicy(Policy):
    """A policy served over the OpenAI chat-completions HTTP API.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``; requests go to
            ``{base_url}/chat/completions``.
        model: the model name sent with each request.
        api_key: sent as ``Authorization: Bearer <key>`` when given.
        timeout_s: the limit for one whole request, streamed or not.
        stream: stream the answer over SSE (``on_text`` then gets each delta).
        logprobs: ask for the sampled tokens' log-probs (``Completion.logprobs``).
        extra_body: extra request fields merged into every request, e.g.
            ``{"return_token_ids": True}`` for vLLM >= 0.10.2 (fills the token ids) or
            ``{"chat_template_kwargs": {"enable_thinking": False}}``.

    The ``aiohttp`` session is created on first use and closed by :meth:`aclose`; the policy is an
    async context manager.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 120,
        stream: bool = True,
        logprobs: bool = False,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got {base_url!r}")
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive, got {timeout_s}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.url = f"{self.base_url}/chat/completions"
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._stream = stream
        self._logprobs = logprobs
        self._extra_body = dict(extra_body or {})
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._session = aiohttp.ClientSession(
                headers=headers, timeout=aiohttp.ClientTimeout(total=self._timeout_s)
            )
        return self._session

    async def aclose(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    def build_request(
        self,
        messages: Sequence[Message],
        sampling: SamplingParams,
        tools: Sequence[dict[str, Any]] | None,
    ) -> dict[str, Any]:
        """The JSON body of one chat-completions request."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages),
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "stream": self._stream,
        }
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if tools:
            body["tools"] = list(tools)
        if self._logprobs:
            body["logprobs"] = True
        if self._stream:
            body["stream_options"] = {"include_usage": True}
        body.update(self._extra_body)
        return body

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: SamplingParams | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_text: TextCallback | None = None,
    ) -> Completion:
        """Request the next turn from the server.

        Raises:
            ModelAPIError: the server is unreachable, times out, answers with an HTTP error, or
                answers something that is not a chat completion.
        """
        body = self.build_request(messages, sampling or SamplingParams(), tools)
        started = time.perf_counter()
        accumulator = _Accumulator(model=self.model)
        with self._translate_errors():
            async with self._get_session().post(self.url, json=body) as response:
                if response.status >= 400:
                    text = await response.text(errors="replace")
                    raise ModelAPIError(
                        f"the model server at {self.url} returned HTTP {response.status}: "
                        f"{_server_error_message(text)}"
                    )
                if body["stream"] and response.content_type == "text/event-stream":
                    await self._read_stream(response, accumulator, on_text)
                else:
                    await self._read_json(response, accumulator, on_text)
        return accumulator.completion(time.perf_counter() - started)

    def _error(self, problem: str) -> ModelAPIError:
        return ModelAPIError(f"the model server at {self.url} {problem}")

    @contextlib.contextmanager
    def _translate_errors(self) -> Iterator[None]:
        """Map aiohttp and timeout errors to ``ModelAPIError``, keeping the cause."""
        try:
            yield
        except ModelAPIError:
            raise
        except aiohttp.ClientConnectorError as exc:
            reason = (exc.os_error.strerror or str(exc.os_error)) if exc.os_error else str(exc)
            raise ModelAPIError(f"cannot reach the model server at {self.url}: {reason}") from exc
        except TimeoutError as exc:
            raise self._error(f"did not answer within {self._timeout_s:g} s") from exc
        except aiohttp.ClientPayloadError as exc:
            raise self._error(f"broke off its answer: {exc}") from exc
        except aiohttp.ClientError as exc:
            raise ModelAPIError(
                f"request to the model server at {self.url} failed: {type(exc).__name__}: {exc}"
            ) from exc

    async def _read_json(
        self,
        response: aiohttp.ClientResponse,
        accumulator: _Accumulator,
        on_text: TextCallback | None,
    ) -> None:
        raw = await response.text(errors="replace")
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            raise self._error(
                f"returned a non-JSON response: {_snippet(raw) or '(empty)'}"
            ) from exc
        choice = self._first_choice(payload, raw)
        message = choice.get("message")
        if not isinstance(message, dict):
            raise self._error(f"returned a choice without a message: {_snippet(raw)}")
        content = message.get("content") or ""
        accumulator.text.append(content)
        for index, call in enumerate(message.get("tool_calls") or []):
            accumulator.add_tool_call_delta({"index": index, **call})
        accumulator.add_choice_extras(choice)
        accumulator.add_response_extras(payload)
        await emit_text(on_text, content)

    def _first_choice(self, payload: Any, raw: str) -> dict[str, Any]:
        if isinstance(payload, dict) and "error" in payload and not payload.get("choices"):
            raise self._error(f"returned an error: {_server_error_message(raw)}")
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._error(f"returned no choices: {_snippet(raw)}")
        return choices[0]

    async def _read_stream(
        self,
        response: aiohttp.ClientResponse,
        accumulator: _Accumulator,
        on_text: TextCallback | None,
    ) -> None:
        saw_done = False
        saw_chunk = False
        async for data in self._sse_data(response):
            if data == "[DONE]":
                saw_done = True
                break
            try:
                payload = json.loads(data)
            except ValueError as exc:
                raise self._error(f"sent a malformed stream event: {_snippet(data)}") from exc
            if not isinstance(payload, dict):
                raise self._error(f"sent a malformed stream event: {_snippet(data)}")
            if "error" in payload:
                raise self._error(f"failed mid-stream: {_server_error_message(data)}")
            saw_chunk = True
            accumulator.add_response_extras(payload)
            for choice in payload.get("choices") or []:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                content = delta.get("content")
                if content:
                    accumulator.text.append(content)
                    await emit_text(on_text, content)
                for call in delta.get("tool_calls") or []:
                    accumulator.add_tool_call_delta(call)
                accumulator.add_choice_extras(choice)
        if not saw_chunk:
            raise self._error("sent an empty stream")
        if not saw_done and accumulator.finish_reason is None:
            raise self._error("ended the stream before the answer was complete")

    async def _sse_data(self, response: aiohttp.ClientResponse) -> AsyncIterator[str]:
        """The ``data`` fields of the server-sent events (multi-line data joined by newlines)."""
        lines: list[str] = []
        async for raw_line in response.content:
            line = raw_line.decode("utf-8", errors="replace").rstrip("\r\n")
            if not line:
                if lines:
                    yield "\n".join(lines)
                    lines = []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if name == "data":
                lines.append(value.removeprefix(" "))
        if lines:
            yield "\n".join(lines)

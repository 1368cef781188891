"""The ToolEnv simulator: answers calls from the seeded world and injects failures.

One :class:`ToolEnvSimulator` serves any number of :class:`ToolRecord` objects. A call is answered,
in order of precedence, by a pinned response (a task fixed it), a hand-written handler (built-in
tools, grounded in :class:`World`), or the schema-driven generator (every other tool). Answers are
pure functions of ``(seed, tool, canonical arguments)``; failure injection and latency are seeded
too and both off by default.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paraagent_runtime import PinnedResponse, tool_id
from paraagent_runtime.naming import model_facing_name
from paraagent_runtime.validation import validate_arguments

from .builtin import Handler, builtin_handlers
from .errors import (
    ToolEnvArgumentError,
    ToolEnvHTTPError,
    ToolEnvTimeoutError,
    ToolEnvTruncatedError,
    ToolEnvUnknownToolError,
)
from .generic import canonical_arguments, generate_response
from .records import ToolRecord
from .world import World

if TYPE_CHECKING:
    from .llm_simulator import LLMSimulator

__all__ = ["FailureKind", "LatencyModel", "ToolEnvSimulator"]

logger = logging.getLogger(__name__)

FailureKind = str
"""One of ``"timeout"``, ``"rate_limit"`` (HTTP 429), ``"unavailable"`` (HTTP 503), \
``"truncated"``."""
FAILURE_KINDS: tuple[FailureKind, ...] = ("timeout", "rate_limit", "unavailable", "truncated")


@dataclass(frozen=True)
class LatencyModel:
    """Seeded per-call latency.

    ``base_s`` (or a per-tool/per-provider override) plus uniform jitter.

    Args:
        base_s: Latency every call pays.
        jitter_s: Upper bound of the extra uniform delay.
        per_tool_s: Base latency overrides keyed by tool id (``weather/get_forecast``) or provider.
    """

    base_s: float = 0.05
    jitter_s: float = 0.05
    per_tool_s: Mapping[str, float] = field(default_factory=dict)

    def delay_s(self, record: ToolRecord, rng: random.Random) -> float:
        """The delay of one call drawn from ``rng``."""
        base = self.per_tool_s.get(record.id, self.per_tool_s.get(record.provider, self.base_s))
        return max(0.0, base + rng.uniform(0.0, self.jitter_s))


class ToolEnvSimulator:
    """Answers tool calls for a set of tool records from one seeded world.

    Args:
        records: The tools to serve (ids must be unique).
        seed: The world seed; equal seeds give identical answers.
        failure_rate: Probability that a call attempt fails with an injected error.
        failure_kinds: Which failures to inject (uniformly), from :data:`FAILURE_KINDS`.
        latency: Seeded latency model; ``None`` answers immediately.
        pinned: Responses fixed for exact calls.
        handlers: Handlers by tool id; defaults to the built-in handlers.
        llm: Optional LLM simulation for tools without a handler (pinned responses and handlers
            still win). Only :meth:`call` uses it; :meth:`respond` stays the schema-driven,
            model-free answer that gold DAGs are built from.
    """

    def __init__(
        self,
        records: Iterable[ToolRecord],
        *,
        seed: int = 0,
        failure_rate: float = 0.0,
        failure_kinds: Iterable[FailureKind] = FAILURE_KINDS,
        latency: LatencyModel | None = None,
        pinned: Iterable[PinnedResponse] = (),
        handlers: Mapping[str, Handler] | None = None,
        llm: LLMSimulator | None = None,
    ) -> None:
        if not 0.0 <= failure_rate <= 1.0:
            raise ValueError(f"failure_rate must be within [0, 1], got {failure_rate}")
        self.failure_kinds = tuple(failure_kinds)
        unknown = set(self.failure_kinds) - set(FAILURE_KINDS)
        if unknown or not self.failure_kinds:
            raise ValueError(
                f"failure_kinds must be a non-empty subset of {FAILURE_KINDS}, got "
                f"{sorted(unknown)}"
            )
        self.seed = int(seed)
        self.failure_rate = failure_rate
        self.latency = latency
        self.llm = llm
        self.world = World(self.seed)
        self.records: dict[str, ToolRecord] = {}
        self._by_provider: dict[str, list[ToolRecord]] = defaultdict(list)
        for record in records:
            if record.id in self.records:
                raise ValueError(f"duplicate tool id {record.id!r}")
            self.records[record.id] = record
            self._by_provider[record.provider].append(record)
        self.handlers: dict[str, Handler] = dict(
            builtin_handlers() if handlers is None else handlers
        )
        self._attempts: dict[str, int] = defaultdict(int)
        self._pinned: dict[str, Any] = {}
        self.mutations: list[dict[str, Any]] = []
        for pin in pinned:
            self.pin(pin.tool, pin.arguments, pin.response)

    @property
    def providers(self) -> list[str]:
        """Provider names in first-seen order (each becomes one tool source)."""
        return list(self._by_provider)

    def records_for(self, provider: str) -> list[ToolRecord]:
        """The records of one provider."""
        return list(self._by_provider.get(provider, ()))

    def record(self, identifier: str) -> ToolRecord:
        """The record of a tool id, or a :class:`ToolEnvUnknownToolError`."""
        try:
            return self.records[identifier]
        except KeyError:
            raise ToolEnvUnknownToolError(f"ToolEnv has no tool {identifier!r}") from None

    def pin(self, identifier: str, arguments: dict[str, Any], response: Any) -> None:
        """Fix the response of one exact call (after schema defaults are filled in)."""
        record = self.record(identifier)
        self._pinned[self._key(record, arguments)] = response

    def validate(self, identifier: str, arguments: dict[str, Any]) -> None:
        """Check ``arguments`` against the tool's input schema, as the runtime does.

        For callers outside the runtime (ToolEnv's MCP server, task generation); the runtime
        validates before it dispatches, so :meth:`call` does not validate again.

        Raises:
            ToolEnvUnknownToolError: No such tool.
            ToolEnvArgumentError: The arguments violate the schema (the runtime's message).
        """
        record = self.record(identifier)
        problem = validate_arguments(model_facing_name(record.id), record.input_schema, arguments)
        if problem is not None:
            raise ToolEnvArgumentError(record.id, problem)

    def respond(self, identifier: str, arguments: dict[str, Any]) -> Any:
        """The deterministic answer to a call, validated first; no latency or failure injection.

        The entry for building and checking gold DAGs.

        Raises:
            ToolEnvUnknownToolError: No such tool.
            ToolEnvArgumentError: Invalid arguments.
            ToolEnvNotFoundError: The arguments name something the world does not contain.
        """
        self.validate(identifier, arguments)
        return self._respond(self.records[identifier], arguments)

    def _respond(self, record: ToolRecord, arguments: dict[str, Any]) -> Any:
        key = self._key(record, arguments)
        if key in self._pinned:
            return json.loads(json.dumps(self._pinned[key]))
        handler = self.handlers.get(record.id)
        if handler is not None:
            return handler(self.world, dict(arguments))
        return generate_response(record, self._with_defaults(record, arguments), seed=self.seed)

    async def call(self, provider: str, tool: str, arguments: dict[str, Any]) -> Any:
        """Execute one call as a remote API would: latency, injected failures, then the answer.

        The arguments are trusted: the runtime validated them before dispatch, and other
        callers check them with :meth:`validate` first.

        Args:
            provider: The provider (tool source) name.
            tool: The tool's name inside the provider.
            arguments: The call arguments, valid against the tool's input schema.

        Returns:
            The JSON response (a fresh object; callers may mutate it).

        Raises:
            ToolEnvUnknownToolError: No such tool.
            ToolEnvNotFoundError: The arguments name something the world does not contain.
            ToolEnvTransientError: An injected timeout, HTTP 429/503 or truncated body.
        """
        identifier = tool_id(provider, tool)
        record = self.record(identifier)
        key = self._key(record, arguments)
        attempt = self._attempts[key]
        self._attempts[key] += 1
        rng = random.Random(f"call:{self.seed}:{key}:{attempt}")
        if self.latency is not None:
            await asyncio.sleep(self.latency.delay_s(record, rng))
        failure = (
            self.failure_kinds[rng.randrange(len(self.failure_kinds))]
            if rng.random() < self.failure_rate
            else None
        )
        if failure == "timeout":
            raise ToolEnvTimeoutError(f"{identifier}: upstream did not answer in time")
        if failure == "rate_limit":
            raise ToolEnvHTTPError(
                429, f"{identifier}: too many requests", retry_after_s=round(rng.uniform(0.5, 5), 1)
            )
        if failure == "unavailable":
            raise ToolEnvHTTPError(503, f"{identifier}: service unavailable")
        response = await self._answer(record, arguments)
        if failure == "truncated":
            body = json.dumps(response, ensure_ascii=False)
            raise ToolEnvTruncatedError(
                identifier, body[: max(1, int(len(body) * rng.uniform(0.2, 0.8)))], len(body)
            )
        if not record.annotations.read_only:
            self.mutations.append(
                {"tool": identifier, "arguments": dict(arguments), "response": response}
            )
        return response

    async def _answer(self, record: ToolRecord, arguments: dict[str, Any]) -> Any:
        llm = self.llm
        if (
            llm is None
            or record.id in self.handlers
            or self._key(record, arguments) in self._pinned
        ):
            return self._respond(record, arguments)
        return await llm.respond(record, self._with_defaults(record, arguments), seed=self.seed)

    @staticmethod
    def _with_defaults(record: ToolRecord, arguments: dict[str, Any]) -> dict[str, Any]:
        properties = record.input_schema.get("properties") or {}
        filled = {
            key: schema["default"]
            for key, schema in properties.items()
            if isinstance(schema, dict) and "default" in schema
        }
        return {**filled, **arguments}

    def _key(self, record: ToolRecord, arguments: dict[str, Any]) -> str:
        return f"{record.id}|{canonical_arguments(self._with_defaults(record, arguments))}"

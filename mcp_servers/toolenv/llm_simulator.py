"""Optional LLM simulation of tools without a handler (StableToolBench-style), cached on disk.

For a call to a catalog tool, the :class:`LLMSimulator` asks a :class:`Policy` (normally
:class:`~paraagent_runtime.policy.openai_http.OpenAICompatiblePolicy` in front of vLLM or
``paraagent serve-model``) for a JSON response, given the tool's documentation, a few cached
example calls of the same tool and the arguments. The answer is parsed (code fences and prose
around the JSON are tolerated), checked against the tool's output schema and repaired field by
field from the schema-driven generic response; unusable text falls back to the generic response.
Every outcome is counted in :attr:`LLMSimulator.stats`.

Responses are cached persistently in SQLite keyed by ``(tool id, canonical arguments, seed)``, so
a second call — in this process or a later one — returns the same JSON without asking the model,
which makes LLM-simulated episodes reproducible. Policy failures (network, server errors) fall back
to the generic response *without* caching it, so a later run can still ask the model.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing.exceptions import Unresolvable

from paraagent_runtime import ConfigError, Message, ModelAPIError, Policy, SamplingParams

from .generic import canonical_arguments, generate_response
from .records import ToolRecord

__all__ = ["LLMResponseCache", "LLMSimulator", "extract_json"]

logger = logging.getLogger(__name__)

_SYSTEM = (
    "You simulate a real web API. Given the API documentation and the call arguments, answer "
    "with the API's response body only: one JSON value that follows the output schema, with "
    "realistic, self-consistent values. No prose, no code fences."
)
_MAX_SCHEMA_CHARS = 4_000


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text`` (code fences and surrounding prose allowed).

    Raises:
        ValueError: No JSON value could be decoded.
    """
    decoder = json.JSONDecoder()
    stripped = text.strip()
    for start, char in enumerate(stripped):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(stripped, start)
            except json.JSONDecodeError:
                continue
            return value
    raise ValueError("no JSON object or array in the model's answer")


class LLMResponseCache:
    """A persistent response cache: one SQLite table keyed by tool, canonical arguments and seed.

    Args:
        path: The database file (created with its folder when missing).

    Raises:
        ConfigError: ``path`` is a directory or cannot be opened as a database.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"LLM response cache {self.path} is a directory, not a file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, tool TEXT NOT NULL, "
                "arguments TEXT NOT NULL, seed INTEGER NOT NULL, response TEXT NOT NULL, "
                "origin TEXT NOT NULL)"
            )
            self._db.execute("CREATE INDEX IF NOT EXISTS by_tool ON responses (tool)")
            self._db.commit()
        except (sqlite3.Error, OSError) as error:
            raise ConfigError(f"cannot open the LLM response cache {self.path}: {error}") from error

    @staticmethod
    def key(tool: str, arguments: dict[str, Any], seed: int) -> str:
        """The cache key of one call."""
        payload = f"{tool}\0{canonical_arguments(arguments)}\0{seed}"
        return hashlib.sha256(payload.encode()).hexdigest()

    def get(self, tool: str, arguments: dict[str, Any], seed: int) -> tuple[bool, Any]:
        """``(found, response)`` for one call."""
        row = self._db.execute(
            "SELECT response FROM responses WHERE key = ?", (self.key(tool, arguments, seed),)
        ).fetchone()
        return (False, None) if row is None else (True, json.loads(row[0]))

    def put(
        self, tool: str, arguments: dict[str, Any], seed: int, response: Any, *, origin: str
    ) -> None:
        """Store one response (``origin``: ``llm``, ``repaired`` or ``fallback``)."""
        self._db.execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
            (
                self.key(tool, arguments, seed),
                tool,
                canonical_arguments(arguments),
                seed,
                json.dumps(response, ensure_ascii=False),
                origin,
            ),
        )
        self._db.commit()

    def examples(self, tool: str, limit: int) -> list[tuple[dict[str, Any], Any]]:
        """Up to ``limit`` cached ``(arguments, response)`` model answers for ``tool``."""
        rows = self._db.execute(
            "SELECT arguments, response FROM responses WHERE tool = ? AND origin != 'fallback' "
            "ORDER BY rowid LIMIT ?",
            (tool, limit),
        ).fetchall()
        return [(json.loads(arguments), json.loads(response)) for arguments, response in rows]

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        self._db.close()


class LLMSimulator:
    """Answers tool calls with a policy's JSON, validated, repaired and cached.

    Args:
        policy: The model (normally an ``OpenAICompatiblePolicy``); not closed here.
        cache: A :class:`LLMResponseCache` or its path.
        examples: Cached example calls of the same tool shown in the prompt.
        sampling: Decoding settings (default: greedy, 512 tokens).

    Attributes:
        stats: Counts of ``cache_hits``, ``llm_calls``, ``valid``, ``repaired``,
            ``invalid_json``, ``schema_fallback`` and ``policy_errors``.

    Raises:
        ConfigError: ``examples`` is negative, or the cache cannot be opened.
    """

    def __init__(
        self,
        policy: Policy,
        *,
        cache: LLMResponseCache | str | Path,
        examples: int = 3,
        sampling: SamplingParams | None = None,
    ) -> None:
        if examples < 0:
            raise ConfigError(f"LLMSimulator(examples=...) must be >= 0, got {examples}")
        self.policy = policy
        self.cache = cache if isinstance(cache, LLMResponseCache) else LLMResponseCache(cache)
        self.examples = examples
        self.sampling = sampling or SamplingParams(max_tokens=512, temperature=0.0)
        self.stats: Counter[str] = Counter()
        self._locks: dict[str, asyncio.Lock] = {}

    async def respond(self, record: ToolRecord, arguments: dict[str, Any], *, seed: int) -> Any:
        """The simulated response to a valid call of ``record`` (cached after the first time)."""
        key = LLMResponseCache.key(record.id, arguments, seed)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            found, cached = self.cache.get(record.id, arguments, seed)
            if found:
                self.stats["cache_hits"] += 1
                return cached
            fallback = generate_response(record, arguments, seed=seed)
            messages = self.prompt(record, arguments, seed=seed)
            self.stats["llm_calls"] += 1
            try:
                completion = await self.policy.complete(messages, sampling=self.sampling)
            except ModelAPIError as error:
                self.stats["policy_errors"] += 1
                logger.warning("LLM simulation of %s failed, generic answer: %s", record.id, error)
                return fallback
            response, origin = self._check(record, completion.text, fallback)
            self.cache.put(record.id, arguments, seed, response, origin=origin)
            return response

    def prompt(self, record: ToolRecord, arguments: dict[str, Any], *, seed: int) -> list[Message]:
        """The chat messages asking for one response (documentation, examples, arguments)."""
        schema = record.output_schema or (
            {"example": record.response_template} if record.response_template is not None else {}
        )
        doc = {
            "api": record.id,
            "description": record.description,
            "input_schema": record.input_schema,
            "output_schema": schema,
        }
        lines = [f"API documentation:\n{json.dumps(doc, ensure_ascii=False)[:_MAX_SCHEMA_CHARS]}"]
        for example_arguments, example_response in self.cache.examples(record.id, self.examples):
            lines.append(
                f"Example call: {canonical_arguments(example_arguments)}\n"
                f"Example response: {json.dumps(example_response, ensure_ascii=False)}"
            )
        lines.append(f"World seed: {seed}\nCall arguments: {canonical_arguments(arguments)}")
        lines.append("Response JSON:")
        return [
            Message(role="system", content=_SYSTEM),
            Message(role="user", content="\n\n".join(lines)),
        ]

    def _check(self, record: ToolRecord, text: str, fallback: Any) -> tuple[Any, str]:
        try:
            value = extract_json(text)
        except ValueError:
            self.stats["invalid_json"] += 1
            return fallback, "fallback"
        schema = record.output_schema
        if not schema:
            self.stats["valid"] += 1
            return value, "llm"
        try:
            validator = Draft202012Validator(schema)
            if validator.is_valid(value):
                self.stats["valid"] += 1
                return value, "llm"
            repaired = _repair(value, schema, fallback)
            if validator.is_valid(repaired):
                self.stats["repaired"] += 1
                return repaired, "repaired"
        except (SchemaError, Unresolvable):
            pass
        self.stats["schema_fallback"] += 1
        return fallback, "fallback"


def _repair(value: Any, schema: dict[str, Any], fallback: Any) -> Any:
    """``value`` with every part that breaks ``schema`` replaced by the generic ``fallback``'s."""
    try:
        if Draft202012Validator(schema).is_valid(value):
            return value
    except (SchemaError, Unresolvable):
        return fallback
    if isinstance(value, dict) and isinstance(fallback, dict):
        properties = schema.get("properties") or {}
        repaired = {}
        for key, sub in value.items():
            if key in properties:
                if key in fallback:
                    repaired[key] = _repair(sub, properties[key], fallback[key])
                elif _valid(sub, properties[key]):
                    repaired[key] = sub
            elif schema.get("additionalProperties", True) is not False:
                repaired[key] = sub
        for key in schema.get("required") or ():
            if key not in repaired and key in fallback:
                repaired[key] = fallback[key]
        return repaired
    if isinstance(value, list) and isinstance(fallback, list) and fallback:
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [_repair(item, items, fallback[0]) for item in value] or fallback
    return fallback


def _valid(value: Any, schema: Any) -> bool:
    try:
        return isinstance(schema, dict) and Draft202012Validator(schema).is_valid(value)
    except (SchemaError, Unresolvable):
        return False

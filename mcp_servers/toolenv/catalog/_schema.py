"""Turn upstream JSON-Schema dialects into valid, bounded JSON Schema.

Google discovery schemas, Swagger 2.0 definitions and MCP ``inputSchema`` objects are all "JSON
Schema with quirks": ``$ref`` by name or pointer, ``type: any``/``file``, numbers written as
strings, draft-3 ``required: true``, recursive or enormous definitions. :class:`SchemaBuilder`
inlines references and keeps only keywords that are valid in drafts 7 and 2020-12, within a depth
and node budget; every fix is counted (once per schema) into the source's report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from paraagent_runtime.validation import JSON_TYPES, TYPE_ALIASES

from ._text import clean_text
from .model import SourceReport

__all__ = [
    "INPUT_LIMITS",
    "OUTPUT_LIMITS",
    "SchemaBudget",
    "SchemaBuilder",
    "SchemaLimits",
    "object_schema",
    "pointer_resolver",
    "valid_pattern",
]

_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COUNT_KEYS = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_COMBINERS = ("anyOf", "oneOf", "allOf")
_MAX_VALUE_CHARS = 300


@dataclass(frozen=True)
class SchemaLimits:
    """Bounds for one schema: nesting depth, number of schema nodes, description length.

    Output schemas keep no descriptions (``max_description=0``): the simulator needs their
    shape, and leaving the prose out halves the stored catalog.
    """

    max_depth: int = 6
    max_nodes: int = 100
    max_description: int = 120


INPUT_LIMITS = SchemaLimits()
OUTPUT_LIMITS = SchemaLimits(max_depth=3, max_nodes=40, max_description=0)


@dataclass
class SchemaBudget:
    """The node budget and the fixes noted while building one schema."""

    limits: SchemaLimits
    nodes: int = 0
    flags: set[str] = field(default_factory=set)

    @property
    def exhausted(self) -> bool:
        """True once every node of the budget is spent."""
        return self.nodes >= self.limits.max_nodes

    def take(self) -> bool:
        """Spend one node; False (and a ``schema_truncated`` flag) once the budget is gone."""
        if self.nodes >= self.limits.max_nodes:
            self.flags.add("schema_truncated")
            return False
        self.nodes += 1
        return True

    def flag(self, reason: str) -> None:
        """Note one kind of fix (counted once per schema)."""
        self.flags.add(reason)

    def commit(self, report: SourceReport) -> None:
        """Count the noted fixes into ``report``."""
        for reason in self.flags:
            report.repair(reason)


@lru_cache(maxsize=4096)
def valid_pattern(pattern: str) -> bool:
    """True when Python's ``re`` (what jsonschema uses) compiles ``pattern``."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def pointer_resolver(root: Mapping[str, Any]) -> Callable[[str], Any]:
    """Resolve local ``#/a/b`` JSON pointers against ``root`` (anything else resolves to None)."""

    def resolve(ref: str) -> Any:
        if not ref.startswith("#/"):
            return None
        node: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    return resolve


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The top-level ``{"type": "object", ...}`` input schema of a tool."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    names = [name for name in dict.fromkeys(required) if name in properties]
    if names:
        schema["required"] = names
    return schema


def _small_json(value: Any) -> bool:
    try:
        return len(json.dumps(value, default=None)) <= _MAX_VALUE_CHARS
    except (TypeError, ValueError):
        return False


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        if number != number or number in (float("inf"), float("-inf")):
            return None
        return int(number) if number.is_integer() else number
    return None


class SchemaBuilder:
    """Normalize one schema tree (see the module docstring).

    Args:
        budget: the node budget and fix flags of the schema being built (one per schema).
        resolve: maps a ``$ref`` string to its target (None when it cannot be resolved).
    """

    def __init__(self, budget: SchemaBudget, resolve: Callable[[str], Any] | None = None) -> None:
        self.budget = budget
        self.resolve = resolve or (lambda ref: None)

    def build(self, schema: Any) -> dict[str, Any]:
        """Return the normalized form of ``schema``."""
        return self._node(schema, 0, ())

    def _node(self, schema: Any, depth: int, stack: tuple[str, ...]) -> dict[str, Any]:
        budget = self.budget
        if schema is True or schema == {}:
            return {}
        if not isinstance(schema, Mapping):
            budget.flag("invalid_schema_node")
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(schema, ref, depth, stack)
        if not budget.take():
            return self._leaf(schema)
        out = self._leaf(schema)
        self._scalars(schema, out)
        if depth >= budget.limits.max_depth:
            if any(key in schema for key in ("properties", "items", *_COMBINERS)):
                budget.flag("depth_limit")
            return out
        self._children(schema, out, depth, stack)
        return out

    def _ref(
        self, schema: Mapping[str, Any], ref: str, depth: int, stack: tuple[str, ...]
    ) -> dict[str, Any]:
        name = ref.rsplit("/", 1)[-1]
        description = clean_text(
            schema.get("description"), limit=self.budget.limits.max_description
        )
        if ref in stack:
            self.budget.flag("recursive_ref")
            return {
                "type": "object",
                "description": description or f"{name} (recursive, not expanded)",
            }
        target = self.resolve(ref)
        if not isinstance(target, Mapping):
            self.budget.flag("unresolved_ref")
            return {"description": description} if description else {}
        merged = {**target, **{key: value for key, value in schema.items() if key != "$ref"}}
        return self._node(merged, depth, (*stack, ref))

    def _leaf(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        types = self._types(schema)
        if types:
            out["type"] = types[0] if len(types) == 1 else types
        if schema.get("type") == "file" or schema.get("format") == "binary":
            out["format"] = "binary"
        description = clean_text(
            schema.get("description") or schema.get("title"),
            limit=self.budget.limits.max_description,
        )
        if description:
            out["description"] = description
        return out

    def _types(self, schema: Mapping[str, Any]) -> list[str]:
        raw = schema.get("type")
        values = raw if isinstance(raw, list) else [raw] if raw is not None else []
        types: list[str] = []
        for value in values:
            if not isinstance(value, str):
                self.budget.flag("unknown_type")
                continue
            lowered = value.lower()
            mapped = "string" if lowered == "file" else TYPE_ALIASES.get(lowered, lowered)
            if mapped in JSON_TYPES:
                if mapped not in types:
                    types.append(mapped)
                if mapped != value:
                    self.budget.flag("type_renamed")
            elif lowered != "any":
                self.budget.flag("unknown_type")
        if not types:
            if isinstance(schema.get("properties"), Mapping):
                types = ["object"]
                self.budget.flag("missing_type")
            elif isinstance(schema.get("items"), Mapping | list):
                types = ["array"]
                self.budget.flag("missing_type")
        return types

    def _scalars(self, schema: Mapping[str, Any], out: dict[str, Any]) -> None:
        fmt = schema.get("format")
        if isinstance(fmt, str) and "format" not in out:
            out["format"] = fmt
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            unique = list({json.dumps(item, sort_keys=True): item for item in enum}.values())
            out["enum"] = unique
        for key in ("default", "const"):
            if key in schema and _small_json(schema[key]):
                out[key] = schema[key]
        examples = schema.get("examples")
        if isinstance(examples, list) and examples and _small_json(examples):
            out["examples"] = examples
        for key in _NUMBER_KEYS:
            if key in schema:
                number = _number(schema[key])
                if number is None or (key == "multipleOf" and number <= 0):
                    self.budget.flag("invalid_keyword")
                else:
                    out[key] = number
        for key in _COUNT_KEYS:
            if key in schema:
                number = _number(schema[key])
                if isinstance(number, int) and number >= 0:
                    out[key] = number
                else:
                    self.budget.flag("invalid_keyword")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            if valid_pattern(pattern):
                out["pattern"] = pattern
            else:
                self.budget.flag("invalid_pattern")
        if isinstance(schema.get("uniqueItems"), bool):
            out["uniqueItems"] = schema["uniqueItems"]

    def _children(
        self, schema: Mapping[str, Any], out: dict[str, Any], depth: int, stack: tuple[str, ...]
    ) -> None:
        properties = schema.get("properties")
        required = (
            [name for name in schema.get("required") or [] if isinstance(name, str)]
            if (isinstance(schema.get("required"), list))
            else []
        )
        if isinstance(properties, Mapping):
            built: dict[str, Any] = {}
            for name, child in properties.items():
                if self.budget.exhausted:
                    self.budget.flag("schema_truncated")
                    required = [name for name in required if name in built]
                    break
                if not isinstance(name, str):
                    continue
                if isinstance(child, Mapping) and child.get("required") is True:
                    required.append(name)
                    self.budget.flag("draft3_required")
                built[name] = self._node(child, depth + 1, stack)
            out["properties"] = built
        if required:
            out["required"] = list(dict.fromkeys(required))
        items = schema.get("items")
        if isinstance(items, list):
            self.budget.flag("tuple_items")
            items = items[0] if items else {}
        if isinstance(items, Mapping):
            out["items"] = self._node(items, depth + 1, stack)
        extra = schema.get("additionalProperties")
        if isinstance(extra, bool):
            out["additionalProperties"] = extra
        elif isinstance(extra, Mapping):
            out["additionalProperties"] = self._node(extra, depth + 1, stack)
        for key in _COMBINERS:
            options = schema.get(key)
            if isinstance(options, list):
                built_options = [self._node(option, depth + 1, stack) for option in options]
                if built_options:
                    out[key] = built_options

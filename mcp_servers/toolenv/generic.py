"""Schema-driven responses for tools without a hand-written handler (the large real catalogs).

The response is built from the tool's ``output_schema`` (or, failing that, its
``response_template``), drawing every value from a random stream seeded by
``(world seed, tool id, canonical arguments)``: the same call always gets the same response.
Output properties whose names match input arguments echo the argument, so a response is grounded
in what was asked.
"""

from __future__ import annotations

import hashlib
import json
import random
import string as _string
from datetime import date, timedelta
from typing import Any

from .records import ToolRecord

__all__ = ["canonical_arguments", "generate_response"]

_MAX_DEPTH = 6
_WORDS = (
    "alpha",
    "nova",
    "delta",
    "orbit",
    "cedar",
    "harbor",
    "lumen",
    "vertex",
    "atlas",
    "summit",
    "ember",
    "quartz",
)


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """A stable text form of ``arguments`` (sorted keys, no whitespace) for hashing and caching."""
    return json.dumps(
        arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


def generate_response(record: ToolRecord, arguments: dict[str, Any], *, seed: int) -> Any:
    """Build a deterministic response for a call to ``record`` with ``arguments``.

    Args:
        record: The tool; its ``output_schema`` is used first, then its ``response_template``.
        arguments: The validated call arguments (echoed into same-named output fields).
        seed: The world seed.

    Returns:
        A JSON value valid against ``output_schema`` when there is one.
    """
    digest = hashlib.sha256(
        f"{seed}|{record.id}|{canonical_arguments(arguments)}".encode()
    ).hexdigest()
    builder = _Builder(random.Random(digest), arguments, record.output_schema or {})
    if record.output_schema:
        return builder.from_schema(record.output_schema, "", 0)
    if record.response_template is not None:
        return builder.from_template(record.response_template, "", 0)
    return {"status": "ok", "tool": record.id, "result": builder.text("result")}


class _Builder:
    def __init__(self, rng: random.Random, arguments: dict[str, Any], root: dict[str, Any]) -> None:
        self.rng = rng
        self.arguments = {key.lower(): value for key, value in arguments.items()}
        self.root = root

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, dict) else {}
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            return merged if "$ref" not in target else self.resolve(merged)
        return schema

    def from_schema(self, schema: Any, name: str, depth: int) -> Any:
        if not isinstance(schema, dict):
            return None
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            echoed = self.arguments.get(name.lower())
            return echoed if echoed in schema["enum"] else self.rng.choice(schema["enum"])
        for key in ("oneOf", "anyOf"):
            options = [
                o for o in schema.get(key, []) if isinstance(o, dict) and o.get("type") != "null"
            ]
            if options:
                return self.from_schema(options[0], name, depth)
        if schema.get("allOf"):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                part = self.resolve(part) if isinstance(part, dict) else {}
                merged = {
                    **merged,
                    **part,
                    "properties": {**merged.get("properties", {}), **part.get("properties", {})},
                }
            return self.from_schema(merged, name, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = (
                "object" if "properties" in schema else "array" if "items" in schema else "string"
            )
        if depth >= _MAX_DEPTH and kind in ("object", "array"):
            return {} if kind == "object" else []
        if kind == "object":
            properties = schema.get("properties") or {}
            required = set(schema.get("required") or [])
            out = {}
            for key, sub in properties.items():
                if key in required or self.rng.random() < 0.85:
                    out[key] = self.from_schema(sub, key, depth + 1)
            return out
        if kind == "array":
            low = int(schema.get("minItems", 1))
            high = max(low, min(int(schema.get("maxItems", 3)), 3))
            return [
                self.from_schema(schema.get("items", {}), name, depth + 1)
                for _ in range(self.rng.randint(low, high))
            ]
        if kind in ("integer", "number"):
            return self.number(schema, name, integer=kind == "integer")
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self.string(schema, name)

    def number(self, schema: dict[str, Any], name: str, *, integer: bool) -> int | float:
        echoed = self.arguments.get(name.lower())
        if isinstance(echoed, int | float) and not isinstance(echoed, bool):
            return int(echoed) if integer else echoed
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 0) + 1000))
        if integer:
            return self.rng.randint(
                int(low) + ("exclusiveMinimum" in schema),
                max(int(low), int(high) - ("exclusiveMaximum" in schema)),
            )
        return round(self.rng.uniform(float(low), float(high)), 2)

    def string(self, schema: dict[str, Any], name: str) -> str:
        echoed = self.arguments.get(name.lower())
        if isinstance(echoed, str):
            return echoed
        fmt, lowered = schema.get("format", ""), name.lower()
        if fmt == "date-time" or lowered.endswith(("_at", "time", "timestamp")):
            day = date(2025, 1, 1) + timedelta(days=self.rng.randrange(365))
            return (
                f"{day.isoformat()}T{self.rng.randrange(24):02d}:{self.rng.randrange(60):02d}:00Z"
            )
        if fmt == "date" or "date" in lowered:
            return (date(2025, 1, 1) + timedelta(days=self.rng.randrange(365))).isoformat()
        if fmt in ("uri", "url") or "url" in lowered or "link" in lowered:
            return f"https://example.com/{self.text(name)}"
        if fmt == "email" or "email" in lowered:
            return f"{self.text('user')}@example.com"
        if fmt == "uuid":
            return "-".join(
                "".join(self.rng.choices("0123456789abcdef", k=n)) for n in (8, 4, 4, 4, 12)
            )
        if lowered == "id" or lowered.endswith("id"):
            return "".join(self.rng.choices(_string.ascii_lowercase + _string.digits, k=10))
        text = self.text(name)
        max_length = schema.get("maxLength")
        return text[:max_length] if isinstance(max_length, int) else text

    def text(self, name: str) -> str:
        return f"{name or 'value'}_{self.rng.choice(_WORDS)}_{self.rng.randrange(100, 999)}"

    def from_template(self, template: Any, name: str, depth: int) -> Any:
        if isinstance(template, dict):
            return {
                key: self.from_template(value, key, depth + 1) for key, value in template.items()
            }
        if isinstance(template, list):
            return [self.from_template(item, name, depth + 1) for item in template[:3]]
        if isinstance(template, bool) or template is None:
            return template
        if isinstance(template, int):
            return self.number(
                {"minimum": 0, "maximum": max(10, abs(template) * 2)}, name, integer=True
            )
        if isinstance(template, float):
            return self.number(
                {"minimum": 0.0, "maximum": max(1.0, abs(template) * 2)}, name, integer=False
            )
        return self.string({}, name)

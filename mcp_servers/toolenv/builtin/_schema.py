"""Tiny builders for the JSON Schemas of the built-in catalog (keeps tool definitions readable)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["array", "boolean", "integer", "number", "obj", "string"]

Schema = dict[str, Any]


def _with(schema: Schema, description: str, extra: dict[str, Any]) -> Schema:
    if description:
        schema["description"] = description
    schema.update({key: value for key, value in extra.items() if value is not None})
    return schema


def string(
    description: str = "",
    *,
    enum: Sequence[str] | None = None,
    format: str | None = None,  # noqa: A002 - the JSON Schema keyword
    pattern: str | None = None,
    default: str | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
) -> Schema:
    """A ``string`` schema."""
    return _with(
        {"type": "string"},
        description,
        {
            "enum": list(enum) if enum is not None else None,
            "format": format,
            "pattern": pattern,
            "default": default,
            "minLength": min_length,
            "maxLength": max_length,
        },
    )


def integer(
    description: str = "",
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    default: int | None = None,
) -> Schema:
    """An ``integer`` schema."""
    return _with(
        {"type": "integer"},
        description,
        {"minimum": minimum, "maximum": maximum, "default": default},
    )


def number(
    description: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: float | None = None,
    default: float | None = None,
) -> Schema:
    """A ``number`` schema."""
    return _with(
        {"type": "number"},
        description,
        {
            "minimum": minimum,
            "maximum": maximum,
            "exclusiveMinimum": exclusive_minimum,
            "default": default,
        },
    )


def boolean(description: str = "", *, default: bool | None = None) -> Schema:
    """A ``boolean`` schema."""
    return _with({"type": "boolean"}, description, {"default": default})


def array(
    items: Schema,
    description: str = "",
    *,
    min_items: int | None = None,
    max_items: int | None = None,
) -> Schema:
    """An ``array`` schema of ``items``."""
    return _with(
        {"type": "array", "items": items},
        description,
        {"minItems": min_items, "maxItems": max_items},
    )


def obj(
    properties: dict[str, Schema],
    required: Sequence[str] = (),
    description: str = "",
    *,
    closed: bool = False,
) -> Schema:
    """An ``object`` schema; ``closed`` forbids properties not listed."""
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return _with(schema, description, {})

"""Schema-driven call arguments for real catalog tools, drawn deterministically from a seed.

Values come, in order of preference, from ``const``/``enum``, the schema's ``examples``/``example``,
an example quoted in the property's description (``e.g. "us-east-1"``), a value typical of the
property's name (a city for ``city``, a currency code for ``currency``), and a generic word.
``format``, ``pattern``, length and range constraints are honoured; a property that cannot be
filled (an unsatisfiable pattern, a ``$ref``) makes the whole record unusable (``None``), which the
task generator counts instead of emitting an invalid call.
"""

from __future__ import annotations

import random
import re
import string as _charsets
from datetime import date, timedelta
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser as _sre_parse  # type: ignore[attr-defined]
from typing import Any

from paraagent_runtime.validation import validate_arguments

from .geo import CITIES
from .records import ToolRecord

__all__ = ["sample_arguments", "sample_value"]

_MAX_DEPTH = 3
_WORDS = ("atlas", "harbor", "summit", "cedar", "lumen", "orbit", "quartz", "nova")
_EXAMPLE = re.compile(
    r"""(?:e\.g\.|for example|example|such as)[:,]?\s*"""
    r"""(?:["'`]([^"'`]{1,80})["'`]|([^\s,;()"'`]{1,80}))""",
    re.IGNORECASE,
)
_BY_NAME: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("city",), tuple(city.name for city in CITIES[:12])),
    (("country",), ("US", "DE", "FR", "JP", "GB")),
    (("currency",), ("USD", "EUR", "GBP", "JPY")),
    (("language", "lang", "locale"), ("en", "de", "fr", "es")),
    (("symbol", "ticker"), ("AAPL", "MSFT", "SAP")),
    (("region",), ("us-east-1", "eu-west-1", "europe-west1")),
    (("query", "keyword", "search", "term", "text", "q"), ("solar energy", "coffee", "jazz")),
    (("email",), ("alex.morgan@example.com",)),
    (("url", "uri", "link", "website"), ("https://example.com/page",)),
    (("project",), ("demo-project-123",)),
    (("name", "title"), ("atlas-main", "harbor-prod")),
)
_UNUSABLE = object()


def sample_arguments(record: ToolRecord, rng: random.Random) -> dict[str, Any] | None:
    """Arguments for a call to ``record``: every required property, valid against the schema.

    The draw is checked with the runtime's validator, as every call is.

    Args:
        record: The tool; only its ``input_schema`` is read.
        rng: The random stream (seeded by the caller, so the draw is reproducible).

    Returns:
        The arguments, or ``None`` when the schema cannot be satisfied by this sampler.
    """
    value = _object(record.input_schema, rng, 0)
    if value is _UNUSABLE:
        return None
    return value if validate_arguments(record.id, record.input_schema, value) is None else None


def sample_value(schema: dict[str, Any], name: str, rng: random.Random) -> Any:
    """One value for property ``name`` with ``schema`` (``None`` when it cannot be satisfied)."""
    value = _value(schema, name, rng, 0)
    return None if value is _UNUSABLE else value


def _object(schema: dict[str, Any], rng: random.Random, depth: int) -> Any:
    properties = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for key in schema.get("required") or ():
        sub = properties.get(key)
        if not isinstance(sub, dict):
            return _UNUSABLE
        value = _value(sub, key, rng, depth + 1)
        if value is _UNUSABLE:
            return _UNUSABLE
        out[key] = value
    return out


def _value(schema: dict[str, Any], name: str, rng: random.Random, depth: int) -> Any:
    if "$ref" in schema or depth > _MAX_DEPTH:
        return _UNUSABLE
    if "const" in schema:
        return schema["const"]
    choices = [v for v in schema.get("enum") or () if v is not None]
    if choices:
        return choices[rng.randrange(len(choices))]
    for key in ("oneOf", "anyOf"):
        options = [
            o for o in schema.get(key) or () if isinstance(o, dict) and o.get("type") != "null"
        ]
        if options:
            return _value({**schema, key: None, **options[0]}, name, rng, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        return _object(schema, rng, depth)
    if kind == "array":
        items = schema.get("items")
        count = max(1, int(schema.get("minItems", 1)))
        if not isinstance(items, dict) or count > 3:
            return _UNUSABLE
        values = [_value(items, name, rng, depth + 1) for _ in range(count)]
        return _UNUSABLE if _UNUSABLE in values else values
    if kind in ("integer", "number"):
        return _number(schema, rng, integer=kind == "integer")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return _string(schema, name, rng)


def _number(schema: dict[str, Any], rng: random.Random, *, integer: bool) -> int | float:
    examples = [
        e for e in _examples(schema) if isinstance(e, int | float) and not isinstance(e, bool)
    ]
    if examples:
        return examples[0]
    low = schema.get("minimum", schema.get("exclusiveMinimum", 1))
    high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 1) + 99))
    low, high = low + ("exclusiveMinimum" in schema), high - ("exclusiveMaximum" in schema)
    high = min(high, low + 99)
    if integer:
        return rng.randint(int(low), max(int(low), int(high)))
    return round(rng.uniform(float(low), float(high)), 2)


def _examples(schema: dict[str, Any]) -> list[Any]:
    found = list(schema.get("examples") or []) if isinstance(schema.get("examples"), list) else []
    if "example" in schema:
        found.append(schema["example"])
    if "default" in schema:
        found.append(schema["default"])
    return found


def _string(schema: dict[str, Any], name: str, rng: random.Random) -> Any:
    candidates = [e for e in _examples(schema) if isinstance(e, str) and e]
    description = str(schema.get("description") or "")
    candidates += [quoted or bare for quoted, bare in _EXAMPLE.findall(description)]
    fmt, lowered = schema.get("format", ""), name.lower()
    day = date(2025, 1, 1) + timedelta(days=rng.randrange(365))
    if fmt == "date":
        candidates.insert(0, day.isoformat())
    elif fmt == "date-time":
        candidates.insert(0, f"{day.isoformat()}T{rng.randrange(8, 20):02d}:00:00Z")
    elif fmt == "email":
        candidates.insert(0, "alex.morgan@example.com")
    elif fmt in ("uri", "url"):
        candidates.insert(0, "https://example.com/page")
    elif fmt == "uuid":
        candidates.insert(
            0, "-".join("".join(rng.choices("0123456789abcdef", k=n)) for n in (8, 4, 4, 4, 12))
        )
    for keys, values in _BY_NAME:
        if any(key == lowered or lowered.endswith(key) for key in keys):
            candidates.append(values[rng.randrange(len(values))])
    word = _WORDS[rng.randrange(len(_WORDS))]
    number = rng.randrange(100, 999)
    candidates += [
        f"{word}-{number}",
        word,
        str(number),
        f"{word.upper()}{number}",
        f"{word}_{number}",
    ]
    if "date" in lowered:
        candidates.insert(0, day.isoformat())
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        generated = _from_pattern(pattern, rng)
        if generated is not None:
            candidates.append(generated)
    low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
    for candidate in candidates:
        if isinstance(high, int) and len(candidate) > high:
            continue
        if len(candidate) < low:
            candidate = candidate + "x" * (low - len(candidate))
        if isinstance(pattern, str):
            try:
                if re.search(pattern, candidate) is None:
                    continue
            except re.error:
                return _UNUSABLE
        return candidate
    return _UNUSABLE


_ALNUM = _charsets.ascii_lowercase + _charsets.digits
_CATEGORY_CHARS = {
    _sre.CATEGORY_DIGIT: _charsets.digits,
    _sre.CATEGORY_WORD: _ALNUM,
    _sre.CATEGORY_SPACE: " ",
    _sre.CATEGORY_NOT_DIGIT: _charsets.ascii_lowercase,
    _sre.CATEGORY_NOT_SPACE: _ALNUM,
    _sre.CATEGORY_NOT_WORD: "-",
}


def _from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string matching ``pattern`` (a walk over the parsed regex), or ``None`` when unsure."""
    try:
        parsed = _sre_parse.parse(pattern)
        text = "".join(_emit(list(parsed), rng, 0))
        return text if len(text) <= 200 and re.search(pattern, text) else None
    except (re.error, RecursionError, ValueError, OverflowError, IndexError, TypeError):
        return None


def _emit(items: list[Any], rng: random.Random, depth: int) -> list[str]:
    if depth > 12:
        raise ValueError("pattern too deep")
    out: list[str] = []
    for op, arg in items:
        if op is _sre.LITERAL:
            out.append(chr(arg))
        elif op is _sre.NOT_LITERAL or op is _sre.ANY:
            out.append(
                next(
                    ch for ch in rng.sample(_ALNUM, len(_ALNUM)) if op is _sre.ANY or ord(ch) != arg
                )
            )
        elif op is _sre.IN:
            out.append(_char_in(arg, rng))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            low, high, body = arg
            count = low if low >= 1 else (1 if high >= 1 else 0)
            if high > low and low >= 1:
                count = min(high, low + rng.randrange(3))
            elif high > 3 and low == 0:
                count = min(high, 1 + rng.randrange(6))
            for _ in range(count):
                out += _emit(list(body), rng, depth + 1)
        elif op is _sre.SUBPATTERN:
            out += _emit(list(arg[-1]), rng, depth + 1)
        elif op is _sre.BRANCH:
            out += _emit(list(arg[1][0]), rng, depth + 1)
        elif op is _sre.CATEGORY:
            out.append(rng.choice(_CATEGORY_CHARS.get(arg, "a")))
        elif op is not _sre.AT:
            raise ValueError(f"unsupported regex construct {op}")
    return out


def _char_in(items: list[Any], rng: random.Random) -> str:
    negated = bool(items) and items[0][0] is _sre.NEGATE
    if negated:
        excluded = {chr(a) for op, a in items[1:] if op is _sre.LITERAL}
        return next(ch for ch in rng.sample(_ALNUM, len(_ALNUM)) if ch not in excluded)
    op, arg = items[rng.randrange(len(items))]
    if op is _sre.LITERAL:
        return chr(arg)
    if op is _sre.RANGE:
        return chr(rng.randint(arg[0], arg[1]))
    if op is _sre.CATEGORY:
        return rng.choice(_CATEGORY_CHARS.get(arg, "a"))
    raise ValueError(f"unsupported character set item {op}")

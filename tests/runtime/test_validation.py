"""Argument validation: one message format, one compiled validator per schema, broken schemas."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest

from paraagent_runtime.errors import InvalidSchemaError
from paraagent_runtime.validation import (
    ArgumentCheck,
    compile_schema,
    normalize_schema,
    validate_arguments,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "array", "items": {"type": "integer", "minimum": 1}},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def test_problems_name_the_tool_the_path_and_the_problem() -> None:
    assert validate_arguments("w__forecast", SCHEMA, {"city": "Oslo", "days": [1, 2]}) is None
    assert (
        validate_arguments("w__forecast", SCHEMA, {"city": "Oslo", "days": [1, 0]})
        == "invalid arguments for w__forecast: arguments.days[1]: 0 is less than the minimum of 1"
    )
    message = validate_arguments("w__forecast", SCHEMA, {"days": "x", "extra": 1})
    assert message is not None and message.startswith("invalid arguments for w__forecast: ")
    assert "arguments: 'city' is a required property" in message
    assert "arguments.days: 'x' is not of type 'array'" in message
    assert "'extra' was unexpected" in message


def test_at_most_three_problems_are_named() -> None:
    schema = {"type": "object", "properties": {k: {"type": "string"} for k in "abcde"}}
    message = validate_arguments("t", schema, dict.fromkeys("abcde", 1))
    assert message is not None and message.endswith("; (and 2 more)")
    assert message.count("is not of type 'string'") == 3


def test_a_schema_is_compiled_once_whoever_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "minLength": 7}}}
    compiled: list[object] = []
    validator_for = jsonschema.validators.validator_for

    def counting(schema: object, *args: object, **kwargs: object) -> object:
        compiled.append(schema)
        return validator_for(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.validators, "validator_for", counting)
    assert validate_arguments("a__search", schema, {"q": "long enough"}) is None
    assert validate_arguments("a__search", schema, {"q": "short"}) is not None
    assert validate_arguments("b__search", dict(schema), {"q": 1}) is not None
    assert compiled.count(schema) == 1


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "properties": {"x": {"type": 12}}}, "invalid at properties/x/type"),
        ({"type": "object", "properties": {"x": {"type": "date"}}}, "invalid at properties/x"),
        (
            {"type": "object", "properties": {"x": {"$ref": "#/definitions/missing"}}},
            "$ref '#/definitions/missing' does not resolve",
        ),
        ({"type": "string"}, "describes 'string', not an object"),
    ],
    ids=["invalid-type", "unknown-type-name", "unresolvable-ref", "not-an-object"],
)
def test_a_broken_schema_is_a_typed_error_and_refuses_calls(schema: dict, reason: str) -> None:
    with pytest.raises(InvalidSchemaError, match=re.escape(reason)):
        compile_schema(schema)
    message = validate_arguments("w__broken", schema, {"x": 1})
    assert message is not None and message.startswith("tool w__broken cannot be called: ")
    assert reason in message


# Function definitions as written in function-calling datasets and by hand (OpenAPI-ish types).
DIALECT = {
    "type": "dict",
    "properties": {
        "n": {"type": "int"},
        "ratio": {"type": "float"},
        "pair": {"type": "tuple", "items": [{"type": "str"}, {"type": "Integer"}]},
        "extra": {"type": "any"},
        "options": {
            "type": "dict",
            "properties": {"deep": {"type": "list", "items": {"type": "bool"}}},
        },
        "lower": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        "note": {"type": "string", "nullable": True, "required": True},
    },
}


def test_other_dialects_are_normalized_recursively() -> None:
    assert normalize_schema(DIALECT) == {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "ratio": {"type": "number"},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
            "extra": {},
            "options": {
                "type": "object",
                "properties": {"deep": {"type": "array", "items": {"type": "boolean"}}},
            },
            "lower": {"type": "number", "exclusiveMinimum": 0},
            "note": {"type": ["string", "null"], "nullable": True},
        },
        "required": ["note"],
    }
    assert normalize_schema(SCHEMA) == SCHEMA


def test_a_normalized_schema_is_enforced_not_skipped() -> None:
    good = {"n": 3, "ratio": 0.5, "pair": ["a", 1], "extra": [1], "note": None, "lower": 1}
    assert validate_arguments("t", DIALECT, good) is None
    message = validate_arguments(
        "t", DIALECT, {"n": "3", "ratio": "x", "options": {"deep": ["no"]}, "note": "n"}
    )
    assert message == (
        "invalid arguments for t: arguments.n: '3' is not of type 'integer'; "
        "arguments.options.deep[0]: 'no' is not of type 'boolean'; "
        "arguments.ratio: 'x' is not of type 'number'"
    )
    assert "'note' is a required property" in validate_arguments("t", DIALECT, {})
    assert "0 is less than or equal to the minimum of 0" in validate_arguments(
        "t", DIALECT, {"note": "n", "lower": 0}
    )


def test_integral_floats_are_not_integers() -> None:
    assert validate_arguments("t", DIALECT, {"n": 5.0, "note": "n"}) == (
        "invalid arguments for t: arguments.n: 5.0 is not of type 'integer'"
    )
    assert validate_arguments("t", DIALECT, {"n": True, "note": "n"}) is not None
    assert validate_arguments("t", DIALECT, {"ratio": 5, "note": "n"}) is None


FLAT_SCHEMAS: list[dict[str, Any]] = [
    {"type": "object"},
    {
        "type": "object",
        "title": "args",
        "properties": {
            "s": {"type": "string", "description": "a string"},
            "n": {"type": "number"},
            "i": {"type": "integer", "default": 1},
            "b": {"type": "boolean"},
            "z": {"type": "null"},
            "a": {},
        },
        "required": ["s", "i"],
    },
    {"type": "object", "properties": {"i": {"type": "integer"}}, "additionalProperties": False},
]
VALUES: list[Any] = ["x", 1, 0, 5.0, 2.5, True, False, None, [], {}, [1], {"k": 1}]


@pytest.mark.parametrize("schema", FLAT_SCHEMAS)
def test_the_quick_check_of_flat_schemas_agrees_with_the_full_one(schema: dict[str, Any]) -> None:
    check = compile_schema(schema)
    assert check._plainly_valid is not None  # the quick path is what is under test
    full = ArgumentCheck(check.schema, check._validator)
    full._plainly_valid = None
    names = [*schema.get("properties", {}), "extra"]
    cases: list[Any] = [None, [], "x", {}]
    for name in names:
        cases += [{name: value} for value in VALUES]
        cases += [{"s": "x", "i": 1, name: value} for value in VALUES]
    verdicts = [(check("t", arguments), full("t", arguments)) for arguments in cases]
    assert all(quick == slow for quick, slow in verdicts)
    assert any(quick is None for quick, _ in verdicts) and any(quick for quick, _ in verdicts)

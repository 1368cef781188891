"""Argument validation: one message format, one compiled validator per schema, broken schemas."""

from __future__ import annotations

import logging

import jsonschema
import pytest

from paraagent_runtime.validation import validate_arguments

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
    "schema",
    [
        {"type": "object", "properties": {"x": {"type": 12}}},
        {"type": "object", "properties": {"x": {"$ref": "#/definitions/missing"}}},
    ],
    ids=["invalid-schema", "unresolvable-ref"],
)
def test_a_broken_upstream_schema_is_not_enforced_and_warns_once(
    schema: dict, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="paraagent_runtime.validation"):
        assert validate_arguments("w__broken", schema, {"x": 1}) is None
        assert validate_arguments("w__broken", schema, {"x": 2}) is None
    warnings = [record for record in caplog.records if "not validating" in record.message]
    assert len(warnings) == 1 and "w__broken" in warnings[0].message

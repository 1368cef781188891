"""Tool-call arguments checked against the tool's input JSON Schema: one check, one message format.

:func:`validate_arguments` is the only argument validation there is: the dispatcher runs it on
every call before dispatch, and servers that accept calls from outside the runtime (paraagent's
MCP gateway, ToolEnv's MCP face) run the same function, so a problem reads the same everywhere::

    invalid arguments for weather__forecast: arguments.days[1]: 0 is less than the minimum of 1

Each distinct schema is compiled once and kept in a bounded cache keyed by its JSON text. A
schema that is itself invalid, or whose ``$ref`` cannot be resolved, is logged once and not
enforced: a broken upstream schema must not make its tool uncallable.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

import jsonschema
import referencing.exceptions
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

__all__ = ["validate_arguments"]

logger = logging.getLogger(__name__)

_MAX_REPORTED_ERRORS = 3
_CACHED_SCHEMAS = 4096


class _Compiled:
    """One schema's validator, or why the schema is unusable (logged by the first call only)."""

    def __init__(self, validator: Validator | None, unusable: str | None = None) -> None:
        self.validator = validator
        self.unusable = unusable


@functools.lru_cache(maxsize=_CACHED_SCHEMAS)
def _compiled(schema_json: str) -> _Compiled:
    schema = json.loads(schema_json)
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except SchemaError as exc:
        return _Compiled(None, f"has an invalid input schema ({exc.message})")
    return _Compiled(cls(schema))


def _path(error: jsonschema.ValidationError) -> str:
    return error.json_path.replace("$", "arguments", 1)


def _describe(errors: list[jsonschema.ValidationError]) -> str:
    errors.sort(key=lambda error: (list(map(str, error.absolute_path)), error.message))
    lines = [f"{_path(error)}: {error.message}" for error in errors[:_MAX_REPORTED_ERRORS]]
    if len(errors) > _MAX_REPORTED_ERRORS:
        lines.append(f"(and {len(errors) - _MAX_REPORTED_ERRORS} more)")
    return "; ".join(lines)


def validate_arguments(tool: str, schema: Mapping[str, Any], arguments: Any) -> str | None:
    """Check the ``arguments`` of a call to ``tool`` against its input ``schema``.

    Args:
        tool: The name the caller knows the tool by; it starts the message.
        schema: The tool's input JSON Schema.
        arguments: The call's arguments (a JSON object, if the caller is right).

    Returns:
        None when the arguments are valid (or the schema is unusable, which is logged once),
        else ``invalid arguments for <tool>: <path>: <problem>[; …]`` naming at most three
        problems, ordered by path.
    """
    compiled = _compiled(json.dumps(schema, sort_keys=True, default=str))
    if compiled.validator is not None:
        try:
            errors = list(compiled.validator.iter_errors(arguments))
        except referencing.exceptions.Unresolvable as exc:
            compiled.validator, compiled.unusable = None, f"has an unresolvable $ref ({exc})"
        else:
            return f"invalid arguments for {tool}: {_describe(errors)}" if errors else None
    if compiled.unusable is not None:
        logger.warning("tool %r %s; not validating its arguments", tool, compiled.unusable)
        compiled.unusable = None
    return None

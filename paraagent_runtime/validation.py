"""Tool-call arguments checked against the tool's input JSON Schema: one check, one message format.

A tool's schema is compiled once, when the toolspace lists the tool (:func:`compile_schema`):

1. the **dialect normalizer** (:func:`normalize_schema`) rewrites the type names of other
   dialects found in function-calling datasets and hand-written tools — ``dict``/``map`` →
   ``object``, ``float``/``double`` → ``number``, ``int``/``long`` → ``integer``, ``str``/``text``
   → ``string``, ``bool`` → ``boolean``, ``list``/``tuple`` → ``array``, ``none`` → ``null``,
   ``any`` → no type at all — in every subschema, any letter case; it also turns a property's
   draft-3 ``required: true`` into its parent's ``required`` list and an ``items`` list
   (tuple-style) into ``prefixItems``;
2. the result must be a valid JSON Schema of an object whose ``$ref``s resolve; otherwise
   :class:`~paraagent_runtime.errors.InvalidSchemaError` says why, and the toolspace lists the
   tool as unusable with that reason (:attr:`Toolspace.unusable_tools`) instead of calling it
   unvalidated.

:class:`ArgumentCheck` then checks every call's arguments; the dispatcher runs the check it got
with the call's route, and servers that accept calls from outside the runtime (paraagent's MCP
gateway, ToolEnv's MCP face) run :func:`validate_arguments`, so a problem reads the same
everywhere::

    invalid arguments for weather__forecast: arguments.days[1]: 0 is less than the minimum of 1

Integers are JSON integers: ``5.0`` where a schema says ``integer`` is refused (``5.0 is not of
type 'integer'``), never passed on as a float or silently converted, so a tool always receives
the type its schema promises and the model learns the right spelling from the message.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator

from .errors import InvalidSchemaError

__all__ = [
    "JSON_TYPES",
    "TYPE_ALIASES",
    "ArgumentCheck",
    "compile_schema",
    "normalize_schema",
    "validate_arguments",
]

_MAX_REPORTED_ERRORS = 3
_CACHED_SCHEMAS = 4096

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
"""The seven JSON Schema types."""

TYPE_ALIASES: dict[str, str] = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "long": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "map": "object",
    "none": "null",
}
"""Type names of other dialects (Python, OpenAPI-ish function definitions) → JSON Schema."""
_ANY = "any"
# Keywords whose value is one subschema, a map of subschemas, or a list of subschemas.
_SUBSCHEMA = (
    "additionalItems",
    "additionalProperties",
    "contains",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_SUBSCHEMA_MAPS = ("$defs", "definitions", "dependentSchemas", "patternProperties", "properties")
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
# _META_NOTE: checking a schema against the 2020-12 meta-schema costs ~3 ms ($dynamicRef); the
# draft-7 one checks the keywords tool schemas use (types, properties, required, items, enum,
# bounds) in ~0.25 ms, and a ToolEnv rollout lists dozens of tools per episode.


def _is_integer(checker: object, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@functools.cache
def _strict(cls: type[Validator]) -> type[Validator]:
    """``cls`` whose ``integer`` type admits no floats (``5.0``)."""
    return jsonschema.validators.extend(
        cls, type_checker=cls.TYPE_CHECKER.redefine("integer", _is_integer)
    )


def _normal_type(value: Any) -> Any:
    """The normalized ``type`` value; None when it allows anything (``any``)."""
    names = _as_list(value)
    normal: list[Any] = []
    for name in names:
        if isinstance(name, str):
            lowered = name.strip().lower()
            if lowered == _ANY:
                return None
            name = TYPE_ALIASES.get(lowered, lowered if lowered in JSON_TYPES else name)
        if name not in normal:
            normal.append(name)
    if not isinstance(value, list):
        return normal[0]
    return normal


def normalize_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` with other dialects' spellings turned into JSON Schema.

    Values that are not schemas are kept as they are; whether the result is valid is
    :func:`compile_schema`'s question. Without a ``$schema`` (JSON Schema 2020-12 then applies),
    tuple-style ``items`` lists become ``prefixItems`` and OpenAPI 3.0's boolean
    ``exclusiveMinimum``/``exclusiveMaximum`` become the numeric bounds; OpenAPI's
    ``nullable: true`` adds ``null`` to the type.
    """
    return _normalize(schema, latest="$schema" not in schema)


def _normalize(schema: Any, *, latest: bool) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    if "type" in out:
        normal = _normal_type(out["type"])
        if normal is None:
            del out["type"]
        else:
            out["type"] = normal
    if out.get("nullable") is True and isinstance(out.get("type"), str | list):
        out["type"] = _normal_type([*_as_list(out["type"]), "null"])
    for key in _SUBSCHEMA:
        if key in out:
            value = out[key]
            out[key] = (
                [_normalize(item, latest=latest) for item in value]
                if isinstance(value, list)
                else _normalize(value, latest=latest)
            )
    for key in _SUBSCHEMA_MAPS:
        value = out.get(key)
        if isinstance(value, Mapping):
            out[key] = {name: _normalize(sub, latest=latest) for name, sub in value.items()}
    for key in _SUBSCHEMA_LISTS:
        value = out.get(key)
        if isinstance(value, list):
            out[key] = [_normalize(sub, latest=latest) for sub in value]
    _lift_required(out)
    if latest:
        if isinstance(out.get("items"), list) and "prefixItems" not in out:
            out["prefixItems"] = out.pop("items")
        for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(out.get(exclusive), bool):
                if out.pop(exclusive) and bound in out:
                    out[exclusive] = out.pop(bound)
    return out


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _lift_required(schema: dict[str, Any]) -> None:
    """Move draft-3 ``required: true`` of the properties into the object's ``required`` list."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    required = list(schema["required"]) if isinstance(schema.get("required"), list) else []
    lifted = False
    for name, sub in properties.items():
        if isinstance(sub, dict) and isinstance(sub.get("required"), bool):
            lifted = True
            if sub.pop("required") and name not in required:
                required.append(name)
    if lifted:
        schema["required"] = required


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        ref = value.get("$ref")
        if isinstance(ref, str):
            yield ref
        for sub in value.values():
            yield from _refs(sub)
    elif isinstance(value, list):
        for sub in value:
            yield from _refs(sub)


def _path(error: jsonschema.ValidationError) -> str:
    return error.json_path.replace("$", "arguments", 1)


def _describe(errors: list[jsonschema.ValidationError]) -> str:
    errors.sort(key=lambda error: (list(map(str, error.absolute_path)), error.message))
    lines = [f"{_path(error)}: {error.message}" for error in errors[:_MAX_REPORTED_ERRORS]]
    if len(errors) > _MAX_REPORTED_ERRORS:
        lines.append(f"(and {len(errors) - _MAX_REPORTED_ERRORS} more)")
    return "; ".join(lines)


_ANNOTATION_KEYWORDS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "$comment", "$schema"}
)
_PLAIN_TYPES: dict[str | None, Callable[[Any], bool]] = {
    None: lambda value: True,
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "null": lambda value: value is None,
}


def _plain_check(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """A quick test for the common flat schema (an object of plainly typed properties).

    It says True only for arguments the full check accepts (anything else goes to the full
    check, which words the problem); None for schemas with any other keyword. Most tools'
    schemas are of this shape, and the dispatcher checks every call: jsonschema takes ~10x as
    long for them.
    """
    if schema.get("type") != "object" or set(schema) - _ANNOTATION_KEYWORDS - {
        "type",
        "properties",
        "required",
        "additionalProperties",
    }:
        return None
    properties, required = schema.get("properties", {}), schema.get("required", [])
    additional = schema.get("additionalProperties", True)
    if (
        not isinstance(properties, dict)
        or not isinstance(required, list)
        or additional
        not in (
            True,
            False,
        )
    ):
        return None
    tests: dict[str, Callable[[Any], bool]] = {}
    for name, sub in properties.items():
        if not isinstance(sub, dict) or set(sub) - _ANNOTATION_KEYWORDS - {"type"}:
            return None
        test = _PLAIN_TYPES.get(sub.get("type")) if not isinstance(sub.get("type"), list) else None
        if test is None:
            return None
        tests[name] = test

    def plainly_valid(arguments: Any) -> bool:
        if not isinstance(arguments, dict):
            return False
        for name in required:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            test = tests.get(name)
            if test is None:
                if additional is False:
                    return False
            elif not test(value):
                return False
        return True

    return plainly_valid


class ArgumentCheck:
    """A tool's compiled input schema: checks the arguments of its calls.

    Attributes:
        schema: the normalized schema (what the model is shown and the arguments are held to).
    """

    def __init__(self, schema: dict[str, Any], validator: Validator) -> None:
        self.schema = schema
        self._validator = validator
        self._plainly_valid = _plain_check(schema)

    def __call__(self, tool: str, arguments: Any) -> str | None:
        """Check the ``arguments`` of a call to ``tool`` (the name the caller knows it by).

        Returns:
            None when the arguments are valid, else ``invalid arguments for <tool>: <path>:
            <problem>[; …]`` naming at most three problems, ordered by path.
        """
        if self._plainly_valid is not None and self._plainly_valid(arguments):
            return None
        errors = list(self._validator.iter_errors(arguments))
        return f"invalid arguments for {tool}: {_describe(errors)}" if errors else None


@functools.cache
def _meta(cls: type[Validator]) -> Validator:
    """The validator of schemas written for ``cls``."""
    if cls in (jsonschema.Draft202012Validator, jsonschema.Draft201909Validator):
        cls = jsonschema.Draft7Validator  # see _META_NOTE
    return cls(cls.META_SCHEMA)


class _Schema:
    """A schema as a cache key: equal when the JSON texts (sorted keys) are; keeps key order."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.text = json.dumps(schema, sort_keys=True, default=str)

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Schema) and other.text == self.text


@functools.lru_cache(maxsize=_CACHED_SCHEMAS)
def _compile(key: _Schema) -> ArgumentCheck:
    schema = normalize_schema(json.loads(json.dumps(key.schema, default=str)))
    types = schema.get("type", "object")
    if "object" not in _as_list(types):
        raise InvalidSchemaError(f"the input schema describes {types!r}, not an object")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    problem = best_match(_meta(cls).iter_errors(schema))
    if problem is not None:
        where = "/".join(map(str, problem.absolute_path)) or "the top level"
        raise InvalidSchemaError(f"the input schema is invalid at {where}: {problem.message}")
    specification = referencing.jsonschema.specification_with(cls.META_SCHEMA["$schema"])
    resource = referencing.Resource.from_contents(schema, default_specification=specification)
    resolver = referencing.Registry().with_resource("", resource).resolver()
    for ref in set(_refs(schema)):
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable as exc:
            raise InvalidSchemaError(f"the input schema's $ref {ref!r} does not resolve") from exc
    return ArgumentCheck(schema, _strict(cls)(schema))


def compile_schema(schema: Mapping[str, Any]) -> ArgumentCheck:
    """Normalize and compile a tool's input schema (each distinct schema once, then cached).

    Raises:
        InvalidSchemaError: the schema is not a valid JSON Schema of an object even after
            normalization, or one of its ``$ref``s does not resolve.
    """
    return _compile(_Schema(schema))


def validate_arguments(tool: str, schema: Mapping[str, Any], arguments: Any) -> str | None:
    """Check the ``arguments`` of a call to ``tool`` against its input ``schema``.

    For callers holding a raw schema; the dispatcher uses the check compiled at registration.

    Args:
        tool: The name the caller knows the tool by; it starts the message.
        schema: The tool's input JSON Schema (normalized here as at registration).
        arguments: The call's arguments (a JSON object, if the caller is right).

    Returns:
        None when the arguments are valid, else the problem (see :class:`ArgumentCheck`); a
        schema that cannot be compiled refuses every call, naming why.
    """
    try:
        check = compile_schema(schema)
    except InvalidSchemaError as exc:
        return f"tool {tool} cannot be called: {exc}"
    return check(tool, arguments)

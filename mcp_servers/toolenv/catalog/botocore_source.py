"""AWS operations from botocore's service models (``botocore/data/<service>/<version>/``).

Each service contributes the operations of its latest API version (what botocore itself loads).
Input shapes become JSON Schema with types, enums, ranges and required members; output shapes
become the output schema. Recursive shapes are cut where they recur, deep or huge ones at the
schema limits, each counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.records import ToolRecord

from ._annotations import infer_annotations
from ._importer import ImportContext, Importer, load_json
from ._schema import INPUT_LIMITS, OUTPUT_LIMITS, SchemaBudget, object_schema, valid_pattern
from ._text import clean_text, slug

__all__ = ["IMPORTER", "default_path", "latest_models"]

_LICENSE = "Apache-2.0"
_REST_PROTOCOLS = frozenset({"rest-json", "rest-xml"})
_SCALARS = {
    "string": "string",
    "character": "string",
    "integer": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "bigInteger": "integer",
    "float": "number",
    "double": "number",
    "bigDecimal": "number",
    "boolean": "boolean",
}


def default_path() -> Path | None:
    """``botocore/data`` of the installed botocore, or None when it is not installed."""
    try:
        import botocore
    except ImportError:
        return None
    return Path(botocore.__file__).parent / "data"


def latest_models(root: Path) -> list[Path]:
    """The ``service-2.json[.gz]`` of the latest API version of every service under ``root``."""
    models: list[Path] = []
    for service in sorted(p for p in root.iterdir() if p.is_dir()):
        for version in sorted((p for p in service.iterdir() if p.is_dir()), reverse=True):
            found = [version / name for name in ("service-2.json.gz", "service-2.json")]
            model = next((path for path in found if path.is_file()), None)
            if model is not None:
                models.append(model)
                break
    return models


class _ShapeConverter:
    """Convert botocore shapes of one service into JSON Schema within one budget."""

    def __init__(self, shapes: Mapping[str, Any], budget: SchemaBudget) -> None:
        self.shapes = shapes
        self.budget = budget

    def member(
        self, member: Mapping[str, Any], depth: int, stack: tuple[str, ...]
    ) -> dict[str, Any]:
        schema = self.shape(member.get("shape"), depth, stack)
        doc = clean_text(member.get("documentation"), limit=self.budget.limits.max_description)
        if doc:
            schema["description"] = doc
        return schema

    def shape(self, name: Any, depth: int, stack: tuple[str, ...]) -> dict[str, Any]:
        shape = self.shapes.get(name) if isinstance(name, str) else None
        if not isinstance(shape, Mapping):
            self.budget.flag("unresolved_shape")
            return {}
        kind = shape.get("type")
        if name in stack:
            self.budget.flag("recursive_shape")
            return {"type": "object", "description": f"{name} (recursive, not expanded)"}
        if not self.budget.take():
            return {"type": "object"} if kind in {"structure", "map"} else {}
        if kind in {"structure", "list", "map"} and depth >= self.budget.limits.max_depth:
            self.budget.flag("depth_limit")
            return {"type": "array" if kind == "list" else "object"}
        stack = (*stack, name)
        if kind == "structure":
            members = shape.get("members") or {}
            properties: dict[str, Any] = {}
            for key, member in members.items():
                if self.budget.exhausted:
                    self.budget.flag("schema_truncated")
                    break
                if isinstance(member, Mapping):
                    properties[key] = self.member(member, depth + 1, stack)
            schema = object_schema(properties, list(shape.get("required") or []))
            if shape.get("union"):
                schema["maxProperties"] = 1
            return schema
        if kind == "list":
            schema = {
                "type": "array",
                "items": self.member(shape.get("member") or {}, depth + 1, stack),
            }
            self._range(shape, schema, "minItems", "maxItems")
            return schema
        if kind == "map":
            value = self.member(shape.get("value") or {}, depth + 1, stack)
            return {"type": "object", "additionalProperties": value}
        return self._scalar(kind, shape)

    def _scalar(self, kind: Any, shape: Mapping[str, Any]) -> dict[str, Any]:
        if kind == "timestamp":
            return {"type": "string", "format": "date-time"}
        if kind == "blob":
            return {"type": "string", "contentEncoding": "base64"}
        if kind == "document":
            return {}
        mapped = _SCALARS.get(kind) if isinstance(kind, str) else None
        if mapped is None:
            self.budget.flag("unknown_type")
            return {}
        schema: dict[str, Any] = {"type": mapped}
        if mapped == "string":
            enum = shape.get("enum")
            if isinstance(enum, list) and enum:
                schema["enum"] = list(dict.fromkeys(enum))
            pattern = shape.get("pattern")
            if isinstance(pattern, str):
                if valid_pattern(pattern):
                    schema["pattern"] = pattern
                else:
                    self.budget.flag("invalid_pattern")
            self._range(shape, schema, "minLength", "maxLength")
        elif mapped in {"integer", "number"}:
            self._range(shape, schema, "minimum", "maximum")
        return schema

    @staticmethod
    def _range(shape: Mapping[str, Any], schema: dict[str, Any], low: str, high: str) -> None:
        for key, target in (("min", low), ("max", high)):
            value = shape.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                if target.endswith(("Length", "Items")):
                    if value >= 0:
                        schema[target] = int(value)
                else:
                    schema[target] = value


def _service_records(
    model: Mapping[str, Any], service: str, ctx: ImportContext
) -> Iterator[ToolRecord]:
    metadata = model.get("metadata") or {}
    shapes = model.get("shapes") or {}
    operations = model.get("operations") or {}
    protocol = metadata.get("protocol", "")
    title = metadata.get("serviceFullName") or service
    provider = f"aws_{slug(service, max_len=36)}"
    report = ctx.report
    for name, operation in operations.items():
        if not isinstance(operation, Mapping) or not isinstance(name, str):
            report.skip("invalid_operation")
            continue
        in_budget = SchemaBudget(INPUT_LIMITS)
        input_ref = (operation.get("input") or {}).get("shape")
        if input_ref is None:
            input_schema = object_schema({}, [])
        else:
            input_schema = _ShapeConverter(shapes, in_budget).shape(input_ref, 0, ())
            if input_schema.get("type") != "object":
                in_budget.flag("non_object_input")
                input_schema = object_schema({}, [])
            input_schema.pop("description", None)
        in_budget.commit(report)
        output_schema = None
        output_ref = (operation.get("output") or {}).get("shape")
        if output_ref is not None:
            out_budget = SchemaBudget(OUTPUT_LIMITS)
            output_schema = _ShapeConverter(shapes, out_budget).shape(output_ref, 0, ())
            out_budget.commit(report)
        description = clean_text(operation.get("documentation"), limit=500)
        if not description:
            report.repair("empty_description")
            description = f"{title}: {name}"
        method = (
            (operation.get("http") or {}).get("method") if protocol in _REST_PROTOCOLS else None
        )
        yield ToolRecord(
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=infer_annotations(name, method),
            provider=provider,
            category="cloud",
            source="botocore",
            license=_LICENSE,
            schema_quality="spec",
        )


def _read(root: Path, ctx: ImportContext) -> Iterator[ToolRecord]:
    for path in latest_models(root):
        model = load_json(path, ctx.report)
        if isinstance(model, Mapping):
            yield from _service_records(model, path.parent.parent.name, ctx)
        elif model is not None:
            ctx.report.skip("invalid_model_file")
        ctx.advance(1)


def _units(root: Path) -> int:
    return len(latest_models(root))


IMPORTER = Importer(name="botocore", read=_read, units=_units, default_path=default_path)

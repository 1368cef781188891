"""REST operations from the APIs.guru OpenAPI directory (Swagger 2.0, ``specs/**/<version>.json``).

One tool per (path, method). Path- and operation-level parameters are merged (``#/parameters``
references resolved), the body schema inlined from ``#/definitions`` within the schema limits, and
auth/transport headers dropped. The first 2xx (or default) response schema is the output schema.
Specs of ``amazonaws.com`` and ``googleapis.com`` are skipped (counted) when botocore or the Google
discovery documents are in the same build, since those describe the same operations, newer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.records import ToolRecord

from ._annotations import infer_annotations
from ._importer import ImportContext, Importer, files_under, load_json
from ._schema import (
    INPUT_LIMITS,
    OUTPUT_LIMITS,
    SchemaBudget,
    SchemaBuilder,
    object_schema,
    pointer_resolver,
)
from ._shared_data import shared_path
from ._text import clean_text, slug, tool_name

__all__ = ["COVERED_BY", "IMPORTER"]

COVERED_BY = {"amazonaws.com": "botocore", "googleapis.com": "google"}
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_DROPPED_HEADERS = re.compile(
    r"^(authorization|content-type|content-length|accept|accept-encoding|user-agent|host|"
    r"x-amz-.*|x-ms-client-request-id|x-ms-return-client-request-id|x-api-key|api-key)$",
    re.IGNORECASE,
)
_LICENSE = "CC0-1.0 (APIs.guru definitions)"


def _specs(root: Path) -> list[Path]:
    folder = root / "specs" if (root / "specs").is_dir() else root
    return files_under(folder, ".json")


def _param_schema(param: Mapping[str, Any], builder: SchemaBuilder) -> dict[str, Any]:
    if param.get("in") == "body":
        schema = builder.build(param.get("schema") or {})
        description = clean_text(
            param.get("description"), limit=builder.budget.limits.max_description
        )
        if description and "description" not in schema:
            schema["description"] = description
        return schema
    fields = {
        k: v for k, v in param.items() if k not in {"in", "name", "required", "collectionFormat"}
    }
    schema = builder.build(fields)
    if param.get("collectionFormat") and schema.get("type") != "array":
        schema = {"type": "array", "items": schema}
    return schema


def _operation_records(
    spec: Mapping[str, Any], provider: str, ctx: ImportContext
) -> Iterator[ToolRecord]:
    report = ctx.report
    resolve = pointer_resolver(spec)
    info = spec.get("info") if isinstance(spec.get("info"), Mapping) else {}
    categories = info.get("x-apisguru-categories") or []
    category = (
        str(categories[0]) if isinstance(categories, list) and categories else "uncategorized"
    )
    names: set[str] = set()
    for path, item in (spec.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            report.skip("invalid_path_item")
            continue
        shared = item.get("parameters") if isinstance(item.get("parameters"), list) else []
        for method in _METHODS:
            operation = item.get(method)
            if not isinstance(operation, Mapping):
                continue
            yield from _operation(
                spec, path, method, operation, shared, provider, category, names, resolve, ctx
            )


def _operation(
    spec: Mapping[str, Any],
    path: str,
    method: str,
    operation: Mapping[str, Any],
    shared: list[Any],
    provider: str,
    category: str,
    names: set[str],
    resolve: Any,
    ctx: ImportContext,
) -> Iterator[ToolRecord]:
    report = ctx.report
    budget = SchemaBudget(INPUT_LIMITS)
    builder = SchemaBuilder(budget, resolve)
    merged: dict[tuple[str, str], Mapping[str, Any]] = {}
    own = operation.get("parameters") if isinstance(operation.get("parameters"), list) else []
    for raw in [*shared, *own]:
        param = resolve(raw["$ref"]) if isinstance(raw, Mapping) and "$ref" in raw else raw
        if not isinstance(param, Mapping) or not isinstance(param.get("name"), str):
            budget.flag("unresolved_parameter")
            continue
        merged[(param["name"], str(param.get("in")))] = param
    properties: dict[str, Any] = {}
    required: list[str] = []
    for (name, location), param in merged.items():
        if location == "header" and _DROPPED_HEADERS.match(name):
            budget.flag("transport_header_dropped")
            continue
        key = "body" if location == "body" and name in properties else name
        if key in properties:
            budget.flag("parameter_name_clash")
            continue
        properties[key] = _param_schema(param, builder)
        if param.get("required") is True or location == "path":
            required.append(key)
    budget.commit(report)
    output_schema = None
    responses = (
        operation.get("responses") if isinstance(operation.get("responses"), Mapping) else {}
    )
    for code in sorted(responses, key=lambda c: (not str(c).startswith("2"), str(c))):
        response = responses[code]
        if (str(code).startswith("2") or code == "default") and isinstance(response, Mapping):
            if "schema" in response:
                out_budget = SchemaBudget(OUTPUT_LIMITS)
                output_schema = SchemaBuilder(out_budget, resolve).build(response["schema"])
                out_budget.commit(report)
                break
    raw_name = operation.get("operationId")
    name = tool_name(raw_name if isinstance(raw_name, str) and raw_name else f"{method}_{path}")
    if name in names:
        report.repair("duplicate_name_renamed")
        name = tool_name(f"{name}_{method}_{path}")
        if name in names:
            report.merge("duplicate_operation")
            return
    names.add(name)
    summary = clean_text(operation.get("summary"), limit=200)
    detail = clean_text(operation.get("description"), limit=500)
    description = summary if not detail or detail.startswith(summary) and summary else detail
    if summary and detail and not detail.startswith(summary):
        description = clean_text(f"{summary.rstrip('.')}. {detail}", limit=500)
    if not description:
        report.repair("empty_description")
        description = f"{method.upper()} {spec.get('basePath', '')}{path}"
    yield ToolRecord(
        name=name,
        description=description,
        input_schema=object_schema(properties, required),
        output_schema=output_schema,
        annotations=infer_annotations(name, method),
        provider=provider,
        category=category,
        source="openapi",
        license=_LICENSE,
        schema_quality="spec",
    )


def _read(root: Path, ctx: ImportContext) -> Iterator[ToolRecord]:
    folder = root / "specs" if (root / "specs").is_dir() else root
    for path in _specs(root):
        relative = path.relative_to(folder)
        host = relative.parts[0]
        covering = COVERED_BY.get(host)
        spec = load_json(path, ctx.report)
        ctx.advance(1)
        if spec is None:
            continue
        if not isinstance(spec, Mapping) or not isinstance(spec.get("paths"), Mapping):
            ctx.report.skip("not_a_swagger_spec")
            continue
        if covering in ctx.present:
            count = sum(
                1
                for item in spec["paths"].values()
                if isinstance(item, Mapping)
                for method in _METHODS
                if isinstance(item.get(method), Mapping)
            )
            ctx.report.skip(f"covered_by_{covering}", count)
            continue
        provider = slug("_".join(relative.parent.parts) or path.stem, max_len=36)
        yield from _operation_records(spec, provider, ctx)


def _units(root: Path) -> int:
    return len(_specs(root))


IMPORTER = Importer(
    name="openapi", read=_read, units=_units, default_path=shared_path("openapi-directory-lite")
)

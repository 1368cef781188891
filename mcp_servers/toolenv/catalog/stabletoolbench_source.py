"""RapidAPI endpoints from StableToolBench's solvable queries (the union of their ``api_list``).

Each unique (tool_name, api_name) becomes one record under provider ``rapidapi_<tool>``; its
``template_response`` is the response template. The data derive from ToolBench (CC BY-NC 4.0:
research use only), which the records' ``license`` says.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime import tool_id

from ._annotations import infer_annotations
from ._importer import ImportContext, Importer, load_json
from ._schema import object_schema
from ._shared_data import shared_path
from ._text import clean_text, slug

__all__ = ["IMPORTER", "stabletoolbench_tool_id"]

_LICENSE = "CC-BY-NC-4.0"
_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "enum": {"type": "string"},
    "date (yyyy-mm-dd)": {"type": "string", "format": "date"},
    "time (24-hour hh:mm)": {"type": "string"},
    "array": {"type": "array"},
    "object": {"type": "object"},
    "binary": {"type": "string"},
}


def stabletoolbench_tool_id(tool_name: str, api_name: str) -> str:
    """The catalog tool id of StableToolBench's (``tool_name``, ``api_name``) gold label."""
    return tool_id(f"rapidapi_{slug(tool_name, max_len=36)}", slug(api_name, max_len=64))


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("test_instruction/*.json")) or sorted(root.glob("*.json"))


def _param(param: Mapping[str, Any], ctx: ImportContext) -> dict[str, Any]:
    raw = str(param.get("type") or "").strip().lower()
    schema = dict(_TYPES.get(raw) or {})
    if not schema:
        ctx.report.repair("unknown_type")
    default = param.get("default")
    if raw == "number" and isinstance(default, int) and not isinstance(default, bool):
        schema["type"] = "integer"
    description = clean_text(param.get("description"), limit=160)
    if description:
        schema["description"] = description
    if default not in (None, ""):
        schema["examples"] = [default]
    return schema


def _record(api: Mapping[str, Any], ctx: ImportContext) -> ToolRecord:
    tool, name = str(api["tool_name"]), str(api["api_name"])
    properties: dict[str, Any] = {}
    required: list[str] = []
    for group in ("required_parameters", "optional_parameters"):
        for param in api.get(group) or []:
            if not isinstance(param, Mapping) or not isinstance(param.get("name"), str):
                ctx.report.repair("invalid_parameter_dropped")
                continue
            properties[param["name"]] = _param(param, ctx)
            if group == "required_parameters":
                required.append(param["name"])
    description = clean_text(api.get("api_description"), limit=500)
    if not description:
        ctx.report.repair("empty_description")
        description = f"{tool}: {name}"
    template = api.get("template_response")
    provider, local = stabletoolbench_tool_id(tool, name).split("/", 1)
    return ToolRecord(
        name=local,
        description=description,
        input_schema=object_schema(properties, required),
        response_template=template or None,
        annotations=infer_annotations(name, str(api.get("method") or "GET")),
        provider=provider,
        category=str(api.get("category_name") or "uncategorized"),
        source="stabletoolbench",
        license=_LICENSE,
        schema_quality="spec",
    )


def _read(root: Path, ctx: ImportContext) -> Iterator[ToolRecord]:
    seen: set[tuple[str, str]] = set()
    for path in _files(root):
        queries = load_json(path, ctx.report)
        ctx.advance(1)
        if queries is None:
            continue
        if not isinstance(queries, list):
            ctx.report.skip("not_a_query_list")
            continue
        for query in queries:
            apis = query.get("api_list") if isinstance(query, Mapping) else None
            for api in apis if isinstance(apis, list) else []:
                if (
                    not isinstance(api, Mapping)
                    or not api.get("tool_name")
                    or not api.get("api_name")
                ):
                    ctx.report.skip("invalid_api_entry")
                    continue
                key = (str(api["tool_name"]), str(api["api_name"]))
                if key in seen:
                    ctx.report.merge("repeated_in_queries")
                    continue
                seen.add(key)
                yield _record(api, ctx)


def _units(root: Path) -> int:
    return len(_files(root))


IMPORTER = Importer(
    name="stabletoolbench", read=_read, units=_units, default_path=shared_path("stabletoolbench")
)

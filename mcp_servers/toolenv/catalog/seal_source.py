"""Seal-Tools (``Seal-Tools_Dataset/tool.jsonl``): LLM-generated tools, flagged ``synthetic``.

They are imported for scale and for their multi-call test sets, but they are not real
interfaces and never count toward the catalog's real-interface total.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.records import ToolRecord

from ._annotations import infer_annotations
from ._importer import ImportContext, Importer
from ._schema import object_schema
from ._shared_data import shared_path
from ._text import clean_text, slug, tool_name

__all__ = ["IMPORTER"]

_LICENSE = "Apache-2.0"
_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
}


def _tool_file(root: Path) -> Path:
    nested = root / "Seal-Tools_Dataset" / "tool.jsonl"
    return nested if nested.is_file() else root / "tool.jsonl"


def _fields(spec: Any, ctx: ImportContext) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, field in spec.items() if isinstance(spec, Mapping) else ():
        field = field if isinstance(field, Mapping) else {}
        mapped = _TYPES.get(str(field.get("type", "")).lower())
        schema: dict[str, Any] = {"type": mapped} if mapped else {}
        if mapped is None:
            ctx.report.repair("unknown_type")
        description = clean_text(field.get("description"), limit=160)
        if description:
            schema["description"] = description
        properties[str(name)] = schema
    return properties


def _read(root: Path, ctx: ImportContext) -> Iterator[ToolRecord]:
    path = _tool_file(root)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        ctx.report.skip("invalid_json_file")
        return
    seen: set[str] = set()
    for line in lines:
        if not line.strip():
            continue
        try:
            tool = json.loads(line)
        except ValueError:
            ctx.report.skip("invalid_json_line")
            continue
        if not isinstance(tool, Mapping) or not isinstance(tool.get("api_name"), str):
            ctx.report.skip("invalid_tool_entry")
            continue
        name = tool_name(tool["api_name"])
        field = str(tool.get("field") or "uncategorized")
        domain = field.split("/", 1)[0]
        provider = f"seal_{slug(domain, max_len=30)}"
        if (provider, name) in seen:
            ctx.report.merge("duplicate_tool")
            continue
        seen.add((provider, name))
        properties = _fields(tool.get("parameters"), ctx)
        required = [r for r in tool.get("required") or [] if isinstance(r, str)]
        responses = _fields(tool.get("responses"), ctx)
        description = clean_text(tool.get("api_description"), limit=500)
        if not description:
            ctx.report.repair("empty_description")
            description = f"{field}: {name}"
        yield ToolRecord(
            name=name,
            description=description,
            input_schema=object_schema(properties, required),
            output_schema=object_schema(responses, []) if responses else None,
            annotations=infer_annotations(name),
            provider=provider,
            category=domain,
            source="seal_tools",
            license=_LICENSE,
            schema_quality="synthetic",
        )
    ctx.advance(1)


def _units(root: Path) -> int:
    return 1


IMPORTER = Importer(
    name="seal_tools", read=_read, units=_units, default_path=shared_path("seal-tools"), real=False
)

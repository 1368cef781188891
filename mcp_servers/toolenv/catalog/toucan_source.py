"""MCP server tools from TOUCAN's Smithery metadata (``toucan/mcp_servers/*.json``).

Unprefixed and ``tf_`` files carry the servers' live ``tools/list`` output (JSON Schema inputs,
source ``toucan``); ``cf_`` files only the crawled Smithery listing (untyped string parameters,
source ``toucan_crawled``, counted apart). Forks are merged by server name: a tool name already
seen for the same server is counted as merged, never imported twice, and a crawled listing of a
server whose live tools are present adds nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime import ToolAnnotations

from ._annotations import infer_annotations
from ._importer import ImportContext, Importer, load_json
from ._schema import INPUT_LIMITS, SchemaBudget, SchemaBuilder, object_schema, pointer_resolver
from ._shared_data import shared_path
from ._text import clean_text, slug

__all__ = ["IMPORTER"]

_FILE = re.compile(r"^(cf_|tf_)?(\d+)\.")
_PREFIX_ORDER = {None: 0, "tf_": 1, "cf_": 2}


def _files(root: Path) -> list[Path]:
    folder = root / "mcp_servers" if (root / "mcp_servers").is_dir() else root

    def order(path: Path) -> tuple[int, int, str]:
        match = _FILE.match(path.name)
        if match is None:
            return (3, 0, path.name)
        return (_PREFIX_ORDER[match.group(1)], int(match.group(2)), path.name)

    return sorted(folder.glob("*.json"), key=order)


def _annotations(name: str, hints: Any) -> ToolAnnotations:
    inferred = infer_annotations(name)
    if not isinstance(hints, Mapping) or not hints:
        return inferred
    return ToolAnnotations(
        read_only=bool(hints.get("readOnlyHint", inferred.read_only)),
        destructive=bool(hints.get("destructiveHint", inferred.destructive)),
        idempotent=bool(hints.get("idempotentHint", inferred.idempotent)),
        open_world=bool(hints.get("openWorldHint", True)),
        title=hints.get("title") if isinstance(hints.get("title"), str) else None,
    )


def _live_schema(raw: Any, ctx: ImportContext) -> dict[str, Any]:
    budget = SchemaBudget(INPUT_LIMITS)
    root = raw if isinstance(raw, Mapping) else {}
    if not isinstance(raw, Mapping):
        budget.flag("invalid_input_schema")
    schema = SchemaBuilder(budget, pointer_resolver(root)).build(root)
    if schema.get("type") != "object":
        budget.flag("non_object_input")
        schema = {**schema, "type": "object"}
    schema.setdefault("properties", {})
    budget.commit(ctx.report)
    return schema


def _crawled_schema(name: str, params: Any, ctx: ImportContext) -> dict[str, Any]:
    entries = [p for p in params if isinstance(p, Mapping)] if isinstance(params, list) else []
    names = [p.get("name") for p in entries if isinstance(p.get("name"), str) and p.get("name")]
    if len(names) == 1 and names[0] == name:
        ctx.report.repair("scraping_artifact_param_dropped")
        entries = []
    properties = {
        p["name"]: {"type": "string"}
        for p in entries
        if isinstance(p.get("name"), str) and p["name"] and p["name"] != name
    }
    required = [
        p["name"] for p in entries if p.get("required") is True and p.get("name") in properties
    ]
    return object_schema(properties, required)


def _read(root: Path, ctx: ImportContext) -> Iterator[ToolRecord]:
    report = ctx.report
    seen: dict[str, set[str]] = {}
    live_servers: set[str] = set()
    for path in _files(root):
        data = load_json(path, report)
        ctx.advance(1)
        if data is None:
            continue
        metadata = data.get("metadata") if isinstance(data, Mapping) else None
        if not isinstance(metadata, Mapping):
            report.skip("invalid_server_file")
            continue
        labels = data.get("labels") if isinstance(data.get("labels"), Mapping) else {}
        crawled_info = metadata.get("server_info_crawled") or {}
        server = str(metadata.get("server_name") or crawled_info.get("name") or path.stem)
        key = slug(server, max_len=33)
        live_tools = (metadata.get("remote_server_response") or {}).get("tools") or []
        crawled = not live_tools
        tools = crawled_info.get("tools") or [] if crawled else live_tools
        if crawled and key in live_servers:
            report.merge("crawled_listing_of_live_server", len(tools))
            continue
        if not crawled:
            live_servers.add(key)
        names = seen.setdefault(key, set())
        for tool in tools:
            name = tool.get("name") if isinstance(tool, Mapping) else None
            if not isinstance(name, str) or not name.strip():
                report.skip("unnamed_tool")
                continue
            if name in names:
                report.merge("fork_or_duplicate_tool")
                continue
            names.add(name)
            description = clean_text(tool.get("description"), limit=500)
            if not description:
                report.repair("empty_description")
                description = f"{server}: {name}"
            if crawled:
                schema = _crawled_schema(name, tool.get("parameters"), ctx)
            else:
                schema = _live_schema(tool.get("input_schema", tool.get("inputSchema")), ctx)
            yield ToolRecord(
                name=name,
                description=description,
                input_schema=schema,
                annotations=_annotations(name, tool.get("annotations")),
                provider=f"toucan_{key}",
                category=str(labels.get("primary_label") or "uncategorized"),
                source="toucan_crawled" if crawled else "toucan",
                license=str(crawled_info.get("license") or ""),
                schema_quality="crawled" if crawled else "live",
            )


def _units(root: Path) -> int:
    return len(_files(root))


IMPORTER = Importer(name="toucan", read=_read, units=_units, default_path=shared_path("toucan"))

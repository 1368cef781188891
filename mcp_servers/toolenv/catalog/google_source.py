"""Google API methods from the discovery documents shipped in google-api-python-client.

All versions of an API are read newest first and each method id (``drive.files.list``) is kept
once, from the newest version that has it. Path/query parameters and the request body (its
``$ref`` resolved against the document's schemas, depth- and size-limited) form the input schema;
the response ``$ref`` becomes the output schema. Global transport parameters (``alt``, ``fields``,
``key`` ...) are left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.records import ToolRecord

from ._annotations import infer_annotations
from ._importer import ImportContext, Importer, load_json
from ._schema import INPUT_LIMITS, OUTPUT_LIMITS, SchemaBudget, SchemaBuilder, object_schema
from ._text import clean_text, slug, tool_name

__all__ = ["IMPORTER", "category_of", "default_path", "version_key"]

_LICENSE = "Apache-2.0"
_VERSION = re.compile(r"v(\d+)(?:\.(\d+))?(?:p(\d+))?(?:(alpha|beta)(\d*))?")
_STAGES = {"alpha": 0, "beta": 1, None: 2}
_CATEGORIES = (
    (
        "productivity",
        (
            "drive",
            "gmail",
            "calendar",
            "docs",
            "sheets",
            "slides",
            "tasks",
            "keep",
            "forms",
            "people",
            "chat",
            "meet",
            "script",
            "admin",
            "groups",
            "vault",
            "classroom",
            "contacts",
            "workspace",
        ),
    ),
    ("media", ("youtube", "photos", "books", "blogger", "playmovies")),
    (
        "advertising",
        (
            "ads",
            "adexchange",
            "adsense",
            "adexperience",
            "dfareporting",
            "displayvideo",
            "doubleclick",
            "realtimebidding",
            "authorizedbuyers",
        ),
    ),
    ("analytics", ("analytics", "searchconsole", "webmasters", "bigquery", "looker")),
    (
        "commerce",
        (
            "content",
            "merchant",
            "shopping",
            "payments",
            "paymentsresellersubscription",
            "androidpublisher",
            "gamesmanagement",
            "games",
        ),
    ),
    (
        "maps",
        (
            "maps",
            "places",
            "geocod",
            "routes",
            "airquality",
            "pollen",
            "solar",
            "addressvalidation",
            "streetview",
        ),
    ),
    (
        "ai",
        (
            "aiplatform",
            "ml",
            "language",
            "vision",
            "speech",
            "translate",
            "dialogflow",
            "texttospeech",
            "videointelligence",
            "documentai",
            "discoveryengine",
            "generative",
        ),
    ),
)


def default_path() -> Path | None:
    """The discovery documents of the installed google-api-python-client, if installed."""
    try:
        import googleapiclient
    except ImportError:
        return None
    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


def version_key(version: str) -> tuple[int, ...]:
    """Order API versions: higher major/minor first, then GA over beta over alpha.

    Unparsable versions (``alpha``, ``preview``) sort below every parsed one.
    """
    match = _VERSION.search(version)
    if match is None:
        return (-1,)
    major, minor, patch, stage, stage_number = match.groups()
    return (
        int(major),
        int(minor or 0),
        _STAGES[stage],
        int(patch or 0),
        int(stage_number or 0),
    )


def category_of(api: str) -> str:
    """A coarse category for a Google API name (``cloud`` when no keyword matches)."""
    for category, keywords in _CATEGORIES:
        if any(api.startswith(keyword) for keyword in keywords):
            return category
    return "cloud"


def _methods(resource: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for key, method in (resource.get("methods") or {}).items():
        if isinstance(method, Mapping):
            yield key, method
    for child in (resource.get("resources") or {}).values():
        if isinstance(child, Mapping):
            yield from _methods(child)


def _input_schema(method: Mapping[str, Any], builder: SchemaBuilder) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in (method.get("parameters") or {}).items():
        if not isinstance(param, Mapping):
            builder.budget.flag("invalid_parameter")
            continue
        schema = builder.build({k: v for k, v in param.items() if k != "required"})
        if param.get("repeated"):
            schema = {"type": "array", "items": schema}
            if "description" in schema["items"]:
                schema["description"] = schema["items"].pop("description")
        properties[name] = schema
        if param.get("required") or param.get("location") == "path":
            required.append(name)
    request = method.get("request")
    if isinstance(request, Mapping):
        body = "body" if "body" not in properties else "requestBody"
        properties[body] = builder.build(request)
        required.append(body)
    return object_schema(properties, required)


def _document_records(
    doc: Mapping[str, Any], seen: set[str], ctx: ImportContext
) -> Iterator[ToolRecord]:
    api = str(doc.get("name") or "")
    schemas = doc.get("schemas") or {}
    provider = f"google_{slug(api, max_len=33)}"
    title = doc.get("title") or api
    category = category_of(api)
    report = ctx.report

    def resolve(ref: str) -> Any:
        return schemas.get(ref)

    for key, method in _methods(doc):
        method_id = method.get("id") or f"{api}.{key}"
        if not isinstance(method_id, str):
            report.skip("invalid_method")
            continue
        if method_id in seen:
            report.merge("older_version")
            continue
        seen.add(method_id)
        in_budget = SchemaBudget(INPUT_LIMITS)
        input_schema = _input_schema(method, SchemaBuilder(in_budget, resolve))
        in_budget.commit(report)
        output_schema = None
        response = method.get("response")
        if isinstance(response, Mapping):
            out_budget = SchemaBudget(OUTPUT_LIMITS)
            output_schema = SchemaBuilder(out_budget, resolve).build(response)
            out_budget.commit(report)
        local = method_id.removeprefix(f"{api}.")
        description = clean_text(method.get("description"), limit=500)
        if not description:
            report.repair("empty_description")
            description = f"{title}: {local}"
        yield ToolRecord(
            name=tool_name(local.replace(".", "_")),
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=infer_annotations(local, method.get("httpMethod")),
            provider=provider,
            category=category,
            source="google",
            license=_LICENSE,
            schema_quality="spec",
        )


def _read(root: Path, ctx: ImportContext) -> Iterator[ToolRecord]:
    docs: dict[str, list[tuple[tuple[int, ...], Mapping[str, Any]]]] = defaultdict(list)
    for path in sorted(root.glob("*.json")):
        doc = load_json(path, ctx.report)
        ctx.advance(1)
        if doc is None:
            continue
        if not isinstance(doc, Mapping) or "resources" not in doc and "methods" not in doc:
            ctx.report.skip("not_a_discovery_document")
            continue
        if not isinstance(doc.get("name"), str):
            ctx.report.skip("unnamed_discovery_document")
            continue
        docs[doc["name"]].append((version_key(str(doc.get("version", ""))), doc))
    for api in sorted(docs):
        seen: set[str] = set()
        for _, doc in sorted(docs[api], key=lambda item: item[0], reverse=True):
            yield from _document_records(doc, seen, ctx)


def _units(root: Path) -> int:
    return sum(1 for _ in root.glob("*.json"))


IMPORTER = Importer(name="google", read=_read, units=_units, default_path=default_path)

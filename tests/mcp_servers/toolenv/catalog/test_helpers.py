"""Text cleaning, identifiers, annotation inference and the schema normalizer."""

from __future__ import annotations

import jsonschema
import pytest

from mcp_servers.toolenv.catalog._annotations import infer_annotations
from mcp_servers.toolenv.catalog._schema import (
    INPUT_LIMITS,
    SchemaBudget,
    SchemaBuilder,
    SchemaLimits,
    pointer_resolver,
)
from mcp_servers.toolenv.catalog._text import clean_text, slug, tool_name
from mcp_servers.toolenv.catalog.model import SourceReport


def test_clean_text_strips_html_markdown_and_cuts() -> None:
    text = "<p>Returns the <b>object</b>.</p>\n\n See [docs](http://x) &amp; **more**."
    assert clean_text(text) == "Returns the object . See docs & more."
    long = "First sentence here. " + "word " * 200
    assert clean_text(long, limit=30) == "First sentence here."
    assert (
        clean_text("x" * 100, limit=10).endswith("…") and len(clean_text("x" * 100, limit=10)) == 10
    )
    assert clean_text(None) == "" and clean_text("abc", limit=0) == ""


def test_slug_and_tool_name() -> None:
    assert slug("Exa Search") == "exa_search"
    long_a, long_b = slug("a" * 50 + "x"), slug("a" * 50 + "y")
    assert len(long_a) <= 40 and long_a != long_b
    assert tool_name("files.list/{id}") == "files_list_id"


@pytest.mark.parametrize(
    ("name", "method", "read_only", "destructive"),
    [
        ("GetObject", None, True, False),
        ("DescribeInstances", None, True, False),
        ("ListBuckets", "POST", True, False),
        ("DeleteBucket", None, False, True),
        ("TerminateInstances", None, False, True),
        ("CreateBucket", None, False, False),
        ("files.delete", "DELETE", False, True),
        ("anything", "GET", True, False),
        ("get_thing", "PUT", False, False),
        ("BatchGetItem", None, True, False),
    ],
)
def test_infer_annotations(
    name: str, method: str | None, read_only: bool, destructive: bool
) -> None:
    annotations = infer_annotations(name, method)
    assert (annotations.read_only, annotations.destructive) == (read_only, destructive)


def build(
    schema: object, *, limits: SchemaLimits = INPUT_LIMITS, root: dict | None = None
) -> tuple[dict, SourceReport]:
    report = SourceReport("t")
    budget = SchemaBudget(limits)
    out = SchemaBuilder(budget, pointer_resolver(root or {})).build(schema)
    budget.commit(report)
    jsonschema.Draft202012Validator.check_schema(out)
    jsonschema.Draft7Validator.check_schema(out)
    return out, report


def test_recursive_ref_is_cut_and_counted() -> None:
    root = {
        "definitions": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "next": {"$ref": "#/definitions/Node"},
                },
            }
        }
    }
    out, report = build({"$ref": "#/definitions/Node"}, root=root)
    assert out["properties"]["value"] == {"type": "integer"}
    assert "recursive" in out["properties"]["next"]["description"]
    assert report.repaired["recursive_ref"] == 1


def test_unresolved_ref_missing_and_odd_types_are_repaired() -> None:
    schema = {
        "properties": {
            "a": {"$ref": "#/definitions/Nope", "description": "kept"},
            "b": {"type": "any"},
            "c": {"type": "int", "minimum": "3", "maximum": "x"},
            "d": {"type": "file"},
            "e": {"type": "string", "pattern": "\\p{L}+", "required": True},
            "f": {"items": [{"type": "string"}]},
            "g": 5,
        }
    }
    out, report = build(schema)
    props = out["properties"]
    assert out["type"] == "object"
    assert props["a"] == {"description": "kept"}
    assert props["b"] == {}
    assert props["c"] == {"type": "integer", "minimum": 3}
    assert props["d"] == {"type": "string", "format": "binary"}
    assert "pattern" not in props["e"] and out["required"] == ["e"]
    assert props["f"] == {"type": "array", "items": {"type": "string"}}
    assert props["g"] == {}
    for reason in (
        "unresolved_ref",
        "missing_type",
        "type_renamed",
        "invalid_keyword",
        "invalid_pattern",
        "draft3_required",
        "tuple_items",
        "invalid_schema_node",
    ):
        assert report.repaired[reason] == 1, reason


def test_huge_and_deep_schemas_are_bounded() -> None:
    huge = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(1000)},
        "required": ["p0", "p999"],
    }
    out, report = build(huge, limits=SchemaLimits(max_nodes=50))
    assert len(out["properties"]) == 49
    assert out["required"] == ["p0"]
    assert report.repaired["schema_truncated"] == 1
    deep: dict = {"type": "string"}
    for _ in range(20):
        deep = {"type": "object", "properties": {"x": deep}}
    out, report = build(deep, limits=SchemaLimits(max_depth=3))
    assert out["properties"]["x"]["properties"]["x"]["properties"]["x"] == {"type": "object"}
    assert report.repaired["depth_limit"] == 1

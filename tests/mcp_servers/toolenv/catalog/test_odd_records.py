"""Malformed upstream inputs are repaired or skipped with a counted reason, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from .test_importers import run


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_invalid_json_files_are_skipped_for_every_importer(tmp_path: Path) -> None:
    write(tmp_path / "boto" / "svc" / "2020-01-01" / "service-2.json", "{not json")
    write(tmp_path / "google" / "x.v1.json", "[1,")
    write(tmp_path / "toucan" / "0001.bad.json", "")
    write(tmp_path / "openapi" / "specs" / "x.com" / "1.json", "{")
    write(tmp_path / "stb" / "test_instruction" / "G1.json", "nope")
    write(tmp_path / "seal" / "tool.jsonl", '{"api_name": "ok", "api_description": "d"}\n{broken\n')
    for name, folder in (
        ("botocore", "boto"),
        ("google", "google"),
        ("toucan", "toucan"),
        ("openapi", "openapi"),
        ("stabletoolbench", "stb"),
    ):
        records, report = run(name, tmp_path / folder)
        assert records == [] and report.skipped["invalid_json_file"] == 1, name
    records, report = run("seal_tools", tmp_path / "seal")
    assert [r.name for r in records] == ["ok"] and report.skipped["invalid_json_line"] == 1


def test_google_recursive_missing_type_huge_and_unresolved(tmp_path: Path) -> None:
    doc = {
        "name": "demo",
        "version": "v1",
        "title": "Demo",
        "schemas": {
            "Tree": {
                "id": "Tree",
                "properties": {"children": {"type": "array", "items": {"$ref": "Tree"}}},
            },
            "Huge": {
                "type": "object",
                "properties": {f"f{i}": {"type": "string"} for i in range(5000)},
            },
        },
        "resources": {
            "trees": {
                "methods": {
                    "get": {
                        "id": "demo.trees.get",
                        "httpMethod": "GET",
                        "response": {"$ref": "Tree"},
                        "parameters": {
                            "id": {"type": "string", "location": "path", "required": True}
                        },
                    },
                    "put": {
                        "id": "demo.trees.put",
                        "httpMethod": "PUT",
                        "request": {"$ref": "Huge"},
                        "description": "",
                    },
                    "odd": {
                        "id": "demo.trees.odd",
                        "httpMethod": "POST",
                        "request": {"$ref": "Missing"},
                        "parameters": {"n": {"type": "integer", "minimum": "1"}, "bad": "x"},
                    },
                }
            }
        },
    }
    write(tmp_path / "demo.v1.json", doc)
    records, report = run("google", tmp_path)
    by_name = {r.name: r for r in records}
    assert set(by_name) == {"trees_get", "trees_put", "trees_odd"}
    for record in records:
        jsonschema.Draft202012Validator.check_schema(record.input_schema)
    tree = by_name["trees_get"].output_schema
    assert tree["type"] == "object"
    assert "recursive" in tree["properties"]["children"]["items"]["description"]
    assert by_name["trees_get"].input_schema["required"] == ["id"]
    body = by_name["trees_put"].input_schema["properties"]["body"]
    assert len(body["properties"]) < 200
    assert by_name["trees_put"].description == "Demo: trees.put"
    odd = by_name["trees_odd"].input_schema["properties"]
    assert odd["n"] == {"type": "integer", "minimum": 1} and "bad" not in odd
    for reason in (
        "recursive_ref",
        "missing_type",
        "schema_truncated",
        "unresolved_ref",
        "empty_description",
        "invalid_parameter",
    ):
        assert report.repaired[reason] >= 1, reason


def toucan_file(server: str, tools: list[dict], *, crawled: bool = False) -> dict:
    response = {"tools": [] if crawled else tools}
    return {
        "labels": {"primary_label": "Demo"},
        "metadata": {
            "server_name": server,
            "remote_server_response": response,
            "server_info_crawled": {"license": "MIT", "tools": tools if crawled else []},
        },
    }


def test_toucan_forks_duplicates_and_odd_schemas(tmp_path: Path) -> None:
    search = {
        "name": "search",
        "description": "",
        "input_schema": {
            "properties": {"q": {"type": "str"}, "deep": {"$ref": "#/$defs/Deep"}},
            "$defs": {
                "Deep": {"type": "object", "properties": {"again": {"$ref": "#/$defs/Deep"}}}
            },
            "$schema": "http://json-schema.org/draft-07/schema#",
        },
    }
    write(
        tmp_path / "0001.a_demo.json",
        toucan_file("Demo", [search, search, {"description": "no name"}]),
    )
    write(
        tmp_path / "0002.b_demo.json",
        toucan_file("Demo", [search, {"name": "fetch", "input_schema": "x"}]),
    )
    write(tmp_path / "cf_0003.c_demo.json", toucan_file("Demo", [{"name": "other"}], crawled=True))
    write(
        tmp_path / "cf_0004.d_other.json",
        toucan_file(
            "Other",
            [{"name": "lookup", "parameters": [{"name": "lookup", "type": "string"}]}],
            crawled=True,
        ),
    )
    records, report = run("toucan", tmp_path)
    by_id = {r.id: r for r in records}
    assert set(by_id) == {"toucan_demo/search", "toucan_demo/fetch", "toucan_other/lookup"}
    search_schema = by_id["toucan_demo/search"].input_schema
    jsonschema.Draft202012Validator.check_schema(search_schema)
    assert search_schema["type"] == "object" and "$schema" not in search_schema
    assert search_schema["properties"]["q"] == {"type": "string"}
    assert by_id["toucan_demo/search"].description == "Demo: search"
    assert by_id["toucan_demo/fetch"].input_schema == {"type": "object", "properties": {}}
    assert by_id["toucan_other/lookup"].input_schema["properties"] == {}
    assert report.merged["fork_or_duplicate_tool"] == 2
    assert report.merged["crawled_listing_of_live_server"] == 1
    assert report.skipped["unnamed_tool"] == 1
    assert report.repaired["scraping_artifact_param_dropped"] == 1
    assert report.repaired["recursive_ref"] == 1 and report.repaired["invalid_input_schema"] == 1


def test_openapi_duplicate_names_bad_refs_and_headers(tmp_path: Path) -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "x"},
        "paths": {
            "/a/{id}": {
                "parameters": [{"$ref": "#/parameters/Id"}],
                "get": {
                    "operationId": "op",
                    "parameters": [
                        {"name": "Authorization", "in": "header", "type": "string"},
                        {"$ref": "#/parameters/Nope"},
                    ],
                },
                "delete": {
                    "operationId": "op",
                    "responses": {"200": {"schema": {"$ref": "#/definitions/Gone"}}},
                },
            },
            "/b": {
                "post": {
                    "parameters": [
                        {
                            "name": "payload",
                            "in": "body",
                            "required": True,
                            "schema": {"$ref": "#/definitions/Loop"},
                        }
                    ]
                }
            },
            "/c": "garbage",
        },
        "parameters": {"Id": {"name": "id", "in": "path", "type": "string"}},
        "definitions": {"Loop": {"properties": {"self": {"$ref": "#/definitions/Loop"}}}},
    }
    write(tmp_path / "specs" / "x.com" / "1.json", spec)
    records, report = run("openapi", tmp_path)
    by_name = {r.name: r for r in records}
    assert set(by_name) == {"op", "op_delete_a_id", "post_b"}
    assert by_name["op"].input_schema == {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
    }
    assert by_name["post_b"].input_schema["required"] == ["payload"]
    assert by_name["op_delete_a_id"].annotations.destructive
    for record in records:
        jsonschema.Draft202012Validator.check_schema(record.input_schema)
    for reason in (
        "duplicate_name_renamed",
        "transport_header_dropped",
        "unresolved_parameter",
        "unresolved_ref",
        "recursive_ref",
        "empty_description",
    ):
        assert report.repaired[reason] >= 1, reason
    assert report.skipped["invalid_path_item"] == 1

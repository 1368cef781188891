"""Each importer on small real inputs: counts, schema validity, annotations, dedup."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path

import jsonschema

from mcp_servers.toolenv.catalog import IMPORTERS, stabletoolbench_tool_id
from mcp_servers.toolenv.catalog._importer import ImportContext
from mcp_servers.toolenv.catalog.model import SourceReport
from mcp_servers.toolenv.records import ToolRecord

from .conftest import link_all

FIRST_N = 300


def run(
    name: str, path: Path, present: Iterable[str] = ()
) -> tuple[list[ToolRecord], SourceReport]:
    report = SourceReport(name)
    context = ImportContext(report=report, present=frozenset(present))
    return list(IMPORTERS[name].read(path, context)), report


def assert_valid(records: list[ToolRecord]) -> None:
    assert records
    ids = [record.id for record in records]
    assert len(ids) == len(set(ids))
    for record in records[:FIRST_N]:
        assert record.input_schema["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(record.input_schema)
        if record.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(record.output_schema)
        assert record.description and record.provider and record.license


def test_botocore_two_services(botocore_dir: Path) -> None:
    records, report = run("botocore", botocore_dir)
    assert_valid(records)
    expected = 0
    for service in ("s3", "sqs"):
        latest = sorted((botocore_dir / service).iterdir())[-1] / "service-2.json.gz"
        expected += len(json.loads(gzip.decompress(latest.read_bytes()))["operations"])
    assert len(records) == expected
    by_id = {record.id: record for record in records}
    get_object = by_id["aws_s3/GetObject"]
    assert get_object.annotations.read_only and not get_object.annotations.destructive
    assert by_id["aws_s3/DeleteBucket"].annotations.destructive
    assert set(get_object.input_schema["required"]) >= {"Bucket", "Key"}
    assert get_object.output_schema and get_object.output_schema["type"] == "object"
    assert "<" not in get_object.description
    assert by_id["aws_sqs/SendMessage"].source == "botocore"


def test_google_newest_version_wins_and_older_only_methods_kept(google_dir: Path) -> None:
    records, report = run("google", google_dir)
    assert_valid(records)
    v3 = json.loads((google_dir / "drive.v3.json").read_text())
    v3_get = v3["resources"]["files"]["methods"]["get"]
    by_id = {record.id: record for record in records}
    files_get = by_id["google_drive/files_get"]
    assert set(files_get.input_schema["properties"]) >= set(v3_get["parameters"])
    assert files_get.annotations.read_only
    assert by_id["google_drive/files_delete"].annotations.destructive
    create = by_id["google_drive/files_create"]
    assert "body" in create.input_schema["properties"]
    assert create.output_schema and "properties" in create.output_schema
    assert report.merged["older_version"] > 0
    assert "google_drive/files_insert" in by_id  # only in v2: still one operation
    assert any(record.provider == "google_tasks" for record in records)
    assert all(record.category == "productivity" for record in records)


def test_toucan_live_and_crawled(shared_data: Path, tmp_path: Path) -> None:
    folder = shared_data / "toucan" / "mcp_servers"
    files = sorted(folder.glob("00*.json"))[:5] + sorted(folder.glob("cf_*.json"))[:5]
    records, report = run("toucan", link_all(tmp_path / "toucan", files))
    assert_valid(records)
    live = [r for r in records if r.source == "toucan"]
    crawled = [r for r in records if r.source == "toucan_crawled"]
    assert live and crawled
    assert all(r.schema_quality == "live" for r in live)
    assert all(r.schema_quality == "crawled" for r in crawled)
    for record in crawled:
        assert all(
            prop == {"type": "string"} for prop in record.input_schema["properties"].values()
        )
        assert record.name not in record.input_schema["properties"]
    exa = next(r for r in live if r.name == "web_search_exa")
    assert exa.provider == "toucan_exa_search"
    assert exa.input_schema["required"] == ["query"]


def test_openapi_specs_and_overlap_skip(shared_data: Path, tmp_path: Path) -> None:
    specs = shared_data / "openapi-directory-lite" / "specs"
    root = tmp_path / "openapi" / "specs"
    link_all(root, [specs / "netatmo.net", specs / "1forge.com"])
    link_all(root / "amazonaws.com", [specs / "amazonaws.com" / "acm"])
    records, report = run("openapi", root.parent, present={"botocore"})
    assert_valid(records)
    assert {r.provider for r in records} == {"netatmo_net", "1forge_com"}
    assert report.skipped["covered_by_botocore"] > 0
    webhook = next(r for r in records if r.name == "addwebhook")
    assert webhook.input_schema["required"] == ["url", "app_type"]
    assert webhook.annotations.read_only
    alone, _ = run("openapi", root.parent)
    assert any(r.provider == "amazonaws_com_acm" for r in alone)


def test_stabletoolbench_union_and_gold_ids(shared_data: Path) -> None:
    records, report = run("stabletoolbench", shared_data / "stabletoolbench")
    assert_valid(records)
    assert len(records) == 2220
    assert report.merged["repeated_in_queries"] == 770
    by_id = {record.id: record for record in records}
    queries = json.loads(
        (
            shared_data / "stabletoolbench/solvable_queries/test_instruction/G1_instruction.json"
        ).read_text()
    )
    for tool, api in queries[0]["relevant APIs"]:
        assert stabletoolbench_tool_id(tool, api) in by_id
    assert all(r.license == "CC-BY-NC-4.0" for r in records)
    assert any(r.response_template for r in records)


def test_seal_tools_are_flagged_synthetic(shared_data: Path) -> None:
    records, _ = run("seal_tools", shared_data / "seal-tools")
    assert_valid(records)
    assert len(records) == 4076
    assert {r.schema_quality for r in records} == {"synthetic"}
    assert not IMPORTERS["seal_tools"].real

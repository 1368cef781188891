"""Building, dedup across sources, the cache round trip, stats and the CLI."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_servers.toolenv.catalog import (
    CatalogFileError,
    build_catalog,
    catalog_stats,
    load_catalog,
    read_catalog,
    save_catalog,
)
from mcp_servers.toolenv.catalog._shared_data import SHARED_DATA
from mcp_servers.toolenv.catalog.cli import parse_source_options, toolenv_app
from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime.errors import ConfigError


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PARAAGENT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_build_dedups_extra_records_and_round_trips(botocore_dir: Path, tmp_path: Path) -> None:
    clash = ToolRecord(name="GetObject", provider="aws_s3", description="built-in twin")
    catalog = build_catalog({"botocore": botocore_dir}, progress=False, extra=[clash])
    assert catalog.get("aws_s3/GetObject") == clash
    assert catalog.reports["botocore"].merged["duplicate_id"] == 1
    assert catalog.reports["builtin"].imported == 1
    assert len(catalog) == catalog.reports["botocore"].imported + 1 == catalog.real_count
    path = save_catalog(catalog, tmp_path / "c.jsonl.gz")
    loaded = read_catalog(path)
    assert loaded.records == catalog.records
    assert loaded.fingerprint == catalog.fingerprint
    assert loaded.reports["botocore"].to_json() == catalog.reports["botocore"].to_json()


def test_load_catalog_caches_by_source_versions(google_dir: Path, isolated_cache: Path) -> None:
    sources = {"google": google_dir}
    with pytest.raises(CatalogFileError, match="catalog build"):
        load_catalog(sources=sources, build=False)
    built = load_catalog(sources=sources)
    cached = list(isolated_cache.glob("toolenv/catalog-*.jsonl.gz"))
    assert len(cached) == 1
    again = load_catalog(sources=sources, build=False)
    assert again.records == built.records
    cached[0].write_bytes(gzip.compress(b'{"format": "other"}\n'))
    rebuilt = load_catalog(sources=sources)
    assert rebuilt.records == built.records


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not gzip", "cannot read"),
        (gzip.compress(b"{bad\n"), "no valid catalog header"),
        (
            gzip.compress(b'{"format": "paraagent-toolenv-catalog", "format_version": 0}\n'),
            "format 0",
        ),
        (
            gzip.compress(
                b'{"format": "paraagent-toolenv-catalog", "format_version": 1}\n{"name": 1}\n'
            ),
            "invalid records",
        ),
        (
            gzip.compress(
                b'{"format": "paraagent-toolenv-catalog", "format_version": 1, "count": 2}\n'
                b'{"name": "a", "provider": "p"}\n'
            ),
            "truncated",
        ),
    ],
)
def test_bad_catalog_files_raise_typed_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(content)
    with pytest.raises(CatalogFileError, match=message):
        read_catalog(path)


def test_bad_sources_raise_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown catalog source"):
        build_catalog({"nope": tmp_path}, progress=False)
    with pytest.raises(ConfigError, match="does not exist"):
        build_catalog({"botocore": tmp_path / "missing"}, progress=False)
    with pytest.raises(ConfigError, match="NAME=PATH"):
        parse_source_options(["botocore"])
    assert parse_source_options([f"google={tmp_path}"], only=True) == {"google": tmp_path}


def test_stats_counts(google_dir: Path) -> None:
    catalog = build_catalog({"google": google_dir}, progress=False)
    stats = catalog_stats(catalog)
    assert stats.total == stats.real == len(catalog)
    assert stats.by_source == {"google": len(catalog)}
    assert sum(stats.by_provider.values()) == len(catalog)
    assert set(stats.by_provider) == {"google_drive", "google_tasks"}
    assert 0.9 < stats.typed_share <= 1.0
    assert stats.to_json()["reports"]["google"]["merged"]["older_version"] > 0


def test_cli_build_and_stats(botocore_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    output = tmp_path / "out.jsonl.gz"
    result = runner.invoke(
        toolenv_app,
        [
            "catalog",
            "build",
            "--only",
            "--source",
            f"botocore={botocore_dir}",
            "--out",
            str(output),
        ],
    )
    assert result.exit_code == 0, result.output
    assert output.is_file()
    result = runner.invoke(toolenv_app, ["stats", "--catalog", str(output), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{") :])
    assert data["total"] == len(read_catalog(output)) and data["by_source"] == {
        "botocore": data["total"]
    }
    result = runner.invoke(toolenv_app, ["catalog", "build", "--only", "--source", "nope=/x"])
    assert result.exit_code != 0 and isinstance(result.exception, ConfigError)


@pytest.mark.slow
def test_full_catalog_reaches_paper_scale() -> None:
    if not SHARED_DATA.is_dir():
        catalog = build_catalog(progress=False)
        assert catalog.real_count > 35_000
        pytest.skip("../shared/data absent: PyPI sources alone checked")
    catalog = build_catalog(progress=False)
    stats = catalog_stats(catalog)
    assert catalog.real_count >= 50_011
    assert stats.by_source["seal_tools"] == len(catalog) - catalog.real_count
    pypi = stats.by_source["botocore"] + stats.by_source["google"]
    assert pypi > 35_000
    assert catalog.reports["openapi"].skipped["covered_by_botocore"] > 0


def test_schemas_are_parsed_lazily_and_bad_ones_raise_typed_errors(tmp_path: Path) -> None:
    header = b'{"format": "paraagent-toolenv-catalog", "format_version": 2, "count": 2}\n'
    good = b'{"name": "a", "provider": "p"}\t{"input_schema": {"type": "object"}}\n'
    bad = b'{"name": "b", "provider": "p"}\t{"input_schema": "nope"\n'
    path = tmp_path / "lazy.jsonl.gz"
    path.write_bytes(gzip.compress(header + good + bad))
    catalog = read_catalog(path)
    assert len(catalog) == 2 and catalog.real_count == 2
    assert [entry.id for entry in catalog.records.entries] == ["p/a", "p/b"]
    assert catalog.get("p/a").input_schema == {"type": "object"} and catalog.get("p/x") is None
    with pytest.raises(CatalogFileError, match="p/b has invalid schemas"):
        catalog.get("p/b")
    path.write_bytes(gzip.compress(header + b'{"name": 1, "provider": "p"}\t{}\n' + good))
    with pytest.raises(CatalogFileError, match="invalid records"):
        read_catalog(path)

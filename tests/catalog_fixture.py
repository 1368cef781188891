"""A small real catalog for tests: AWS s3/sqs/dynamodb and six Google discovery documents."""

from __future__ import annotations

from pathlib import Path

_BOTOCORE_SERVICES = ("s3", "sqs", "dynamodb")
_GOOGLE_DOCUMENTS = ("tasks.v1", "drive.v3", "youtube.v3", "books.v1", "bigquery.v2", "dataproc.v1")


def small_real_sources(root: Path) -> dict[str, Path]:
    """Link the shared data's files for ~600 real records under ``root``; return the sources.

    The result is what :func:`mcp_servers.toolenv.catalog.build_catalog` takes: cloud (AWS,
    Google dataproc), productivity (drive, tasks), media (youtube, books) and analytics
    (bigquery) records.
    """
    from mcp_servers.toolenv.catalog import botocore_source, google_source

    aws, google = botocore_source.default_path(), google_source.default_path()
    assert aws is not None and google is not None, "the shared data folder is missing"
    linked = {
        "botocore": [aws / name for name in _BOTOCORE_SERVICES],
        "google": [google / f"{name}.json" for name in _GOOGLE_DOCUMENTS],
    }
    sources = {}
    for name, paths in linked.items():
        folder = root / name
        folder.mkdir(parents=True)
        for path in paths:
            (folder / path.name).symlink_to(path)
        sources[name] = folder
    return sources

"""The on-disk catalog: one gzip'd JSON-lines file per set of source versions.

Line 1 is a header (format, fingerprint, source versions, import reports); every further line is
one :class:`ToolRecord` without its default fields. Files are written atomically and named
``catalog-<fingerprint>.jsonl.gz`` in :func:`cache_dir`, so a changed source (another botocore,
edited shared data) gets a new file instead of a stale one.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import tempfile
from functools import lru_cache
from collections.abc import Mapping
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime.errors import ConfigError

from ._importer import files_under
from .model import Catalog, SourceReport

__all__ = [
    "FORMAT_VERSION",
    "CatalogFileError",
    "cache_dir",
    "catalog_fingerprint",
    "catalog_path",
    "read_catalog",
    "save_catalog",
    "source_fingerprint",
]

logger = logging.getLogger(__name__)

FORMAT = "paraagent-toolenv-catalog"
FORMAT_VERSION = 1
_RECORDS = TypeAdapter(list[ToolRecord])


class CatalogFileError(ConfigError):
    """A catalog file is missing, truncated, of another format, or has invalid records."""


def cache_dir() -> Path:
    """``$PARAAGENT_CACHE/toolenv`` when the variable is set, else ``~/.cache/paraagent/toolenv``."""
    root = os.environ.get("PARAAGENT_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "paraagent"
    return base / "toolenv"


def source_fingerprint(path: Path) -> str:
    """A hash of every file's relative path, size and mtime under ``path`` (cheap: stat only)."""
    digest = hashlib.sha1(str(path.resolve()).encode())
    files = [path] if path.is_file() else files_under(path)
    for file in files:
        stat = file.stat()
        digest.update(f"{file.relative_to(path) if file != path else file.name}\0{stat.st_size}\0"
                      f"{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def _code_version() -> str:
    """The importers' own version: any edit of this package invalidates cached catalogs."""
    digest = hashlib.sha1()
    for file in files_under(Path(__file__).parent, ".py"):
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def catalog_fingerprint(versions: Mapping[str, str]) -> str:
    """The cache key of a catalog built from sources with these ``versions``."""
    code = _code_version()
    payload = json.dumps(
        {"format": FORMAT_VERSION, "code": code, "versions": dict(versions)}, sort_keys=True
    )
    return hashlib.sha1(payload.encode()).hexdigest()[:16]


def catalog_path(fingerprint: str, directory: Path | None = None) -> Path:
    """Where the catalog with ``fingerprint`` is cached."""
    return (directory or cache_dir()) / f"catalog-{fingerprint}.jsonl.gz"


def save_catalog(catalog: Catalog, path: Path | None = None) -> Path:
    """Write ``catalog`` (atomically) to ``path`` or its cache path; return the path written."""
    target = path or catalog_path(catalog.fingerprint)
    target.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "fingerprint": catalog.fingerprint,
        "versions": catalog.versions,
        "reports": [report.to_json() for report in catalog.reports.values()],
        "count": len(catalog),
    }
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=".catalog-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as out:
            out.write(json.dumps(header).encode() + b"\n")
            for record in catalog.records:
                out.write(record.model_dump_json(exclude_defaults=True).encode() + b"\n")
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def read_catalog(path: Path) -> Catalog:
    """Load a catalog file written by :func:`save_catalog`.

    Raises:
        CatalogFileError: the file is missing, unreadable, of another format or version, or
            its records do not validate.
    """
    try:
        raw = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise CatalogFileError(f"cannot read catalog file {path}: {error}") from error
    head, _, body = raw.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError as error:
        raise CatalogFileError(f"{path} has no valid catalog header") from error
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CatalogFileError(f"{path} is not a paraagent ToolEnv catalog")
    if header.get("format_version") != FORMAT_VERSION:
        raise CatalogFileError(
            f"{path} has catalog format {header.get('format_version')}, expected {FORMAT_VERSION}"
        )
    lines = body.rstrip(b"\n")
    try:
        records = _RECORDS.validate_json(b"[" + lines.replace(b"\n", b",") + b"]") if lines else []
    except ValidationError as error:
        raise CatalogFileError(f"{path} has invalid records: {error.errors()[:1]}") from error
    if len(records) != header.get("count", len(records)):
        raise CatalogFileError(f"{path} is truncated: {len(records)} of {header['count']} records")
    reports = [SourceReport.from_json(item) for item in header.get("reports", [])]
    return Catalog(
        records=records,
        reports={report.name: report for report in reports},
        versions=dict(header.get("versions", {})),
        fingerprint=str(header.get("fingerprint", "")),
    )

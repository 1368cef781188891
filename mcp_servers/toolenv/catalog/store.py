"""The on-disk catalog: one gzip'd JSON-lines file per set of source versions.

Line 1 is a header (format, fingerprint, source versions, import reports); every further line is
one :class:`ToolRecord` without its default fields, split in two JSON documents by a tab (JSON
text never holds a raw tab): the light fields (name, description, provider, category, …), parsed
and validated when the file is read, then the schemas (input, output, response template), parsed
only when the record is first used (:class:`LazyRecords`). A 65k-record catalog thus loads in a
few seconds instead of parsing ~120 MB of schemas up front. Format 1 files (one document per
line) are still read. Files are written atomically and named
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
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime import ConfigError

from ._importer import files_under
from .model import Catalog, SourceReport

__all__ = [
    "FORMAT_VERSION",
    "CatalogEntry",
    "CatalogFileError",
    "LazyRecords",
    "cache_dir",
    "catalog_fingerprint",
    "catalog_path",
    "read_catalog",
    "save_catalog",
    "source_fingerprint",
]

logger = logging.getLogger(__name__)

FORMAT = "paraagent-toolenv-catalog"
FORMAT_VERSION = 2
_RECORDS = TypeAdapter(list[ToolRecord])
_HEAVY = ("input_schema", "output_schema", "response_template")


class CatalogFileError(ConfigError):
    """A catalog file is missing, truncated, of another format, or has invalid records."""


class CatalogEntry(BaseModel):
    """The light part of a record, read eagerly: enough to list, count and search by text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    provider: str
    category: str = ""
    source: str = "builtin"
    license: str = ""
    schema_quality: str = ""
    annotations: dict[str, Any] = {}

    @property
    def id(self) -> str:
        """The tool id ``<provider>/<name>``."""
        return f"{self.provider}/{self.name}"


_ENTRIES = TypeAdapter(list[CatalogEntry])


class LazyRecords(Sequence[ToolRecord]):
    """Records whose schemas are parsed on first access (then kept).

    Args:
        entries: the eagerly read light parts, in catalog order.
        heavy: each record's raw schemas JSON, in the same order.
        origin: the file they came from (for error messages).
    """

    def __init__(self, entries: list[CatalogEntry], heavy: list[bytes], origin: Path) -> None:
        self.entries = entries
        self._heavy = heavy
        self._origin = origin
        self._built: list[ToolRecord | None] = [None] * len(entries)
        self._index: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> ToolRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[ToolRecord]: ...

    def __getitem__(self, index: int | slice) -> ToolRecord | list[ToolRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        record = self._built[index]
        if record is None:
            record = self._built[index] = self._materialize(index)
        return record

    def __iter__(self) -> Iterator[ToolRecord]:
        for index in range(len(self)):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def get(self, identifier: str) -> ToolRecord | None:
        """The record with tool id ``identifier``, parsing only that one."""
        if self._index is None:
            self._index = {entry.id: index for index, entry in enumerate(self.entries)}
        index = self._index.get(identifier)
        return None if index is None else self[index]

    def _materialize(self, index: int) -> ToolRecord:
        entry = self.entries[index]
        try:
            heavy = json.loads(self._heavy[index]) if self._heavy[index] else {}
            return ToolRecord.model_validate({**entry.model_dump(exclude_defaults=True), **heavy})
        except (ValueError, ValidationError) as error:
            raise CatalogFileError(
                f"{self._origin}: record {entry.id} has invalid schemas: "
                f"{str(error).splitlines()[0]}"
            ) from error


def cache_dir() -> Path:
    """``$PARAAGENT_CACHE/toolenv`` when the variable is set.

    Else ``~/.cache/paraagent/toolenv``.
    """
    root = os.environ.get("PARAAGENT_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "paraagent"
    return base / "toolenv"


def source_fingerprint(path: Path) -> str:
    """A hash of every file's relative path, size and mtime under ``path`` (cheap: stat only)."""
    digest = hashlib.sha1(str(path.resolve()).encode())
    files = [path] if path.is_file() else files_under(path)
    for file in files:
        stat = file.stat()
        digest.update(
            f"{file.relative_to(path) if file != path else file.name}\0{stat.st_size}\0"
            f"{stat.st_mtime_ns}\n".encode()
        )
    return digest.hexdigest()[:16]


_PRESENTATION = frozenset({"cli.py", "stats.py"})


@lru_cache(maxsize=1)
def _code_version() -> str:
    """The importers' own version.

    An edit of this package (but its CLI and stats) invalidates caches.
    """
    digest = hashlib.sha1()
    for file in files_under(Path(__file__).parent, ".py"):
        if file.name in _PRESENTATION:
            continue
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
        with (
            os.fdopen(handle, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) as out,
        ):
            out.write(json.dumps(header).encode() + b"\n")
            for record in catalog.records:
                light = record.model_dump_json(exclude_defaults=True, exclude=set(_HEAVY))
                heavy = record.model_dump_json(exclude_defaults=True, include=set(_HEAVY))
                out.write(light.encode() + b"\t" + heavy.encode() + b"\n")
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
    version = header.get("format_version")
    if version not in (1, FORMAT_VERSION):
        raise CatalogFileError(f"{path} has catalog format {version}, expected {FORMAT_VERSION}")
    lines = body.rstrip(b"\n")
    records: Sequence[ToolRecord]
    try:
        if version == 1:
            records = (
                _RECORDS.validate_json(b"[" + lines.replace(b"\n", b",") + b"]") if lines else []
            )
        else:
            records = _lazy_records(lines.split(b"\n") if lines else [], path)
    except ValidationError as error:
        raise CatalogFileError(f"{path} has invalid records: {error.errors()[:1]}") from error
    if len(records) != header.get("count", len(records)):
        raise CatalogFileError(f"{path} is truncated: {len(records)} of {header['count']} records")
    reports = [SourceReport.from_json(item) for item in header.get("reports", [])]
    return Catalog(
        records=records,  # type: ignore[arg-type]
        reports={report.name: report for report in reports},
        versions=dict(header.get("versions", {})),
        fingerprint=str(header.get("fingerprint", "")),
    )


def _lazy_records(lines: list[bytes], path: Path) -> LazyRecords:
    light: list[bytes] = []
    heavy: list[bytes] = []
    for line in lines:
        head, _, tail = line.partition(b"\t")
        light.append(head)
        heavy.append(tail)
    entries = _ENTRIES.validate_json(b"[" + b",".join(light) + b"]")
    return LazyRecords(entries, heavy, path)

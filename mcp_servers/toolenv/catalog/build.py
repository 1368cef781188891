"""Build the catalog from its sources, and find a cached build.

Sources are named importers (:data:`IMPORTERS`): ``botocore`` and ``google`` default to the
installed PyPI packages, the rest to ``<repo>/../shared/data/<folder>`` when it exists. Records
are taken in the importers' fixed order and each tool id is kept once (later duplicates are
counted as merged into the first).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime import ConfigError

from . import (
    botocore_source,
    google_source,
    openapi_source,
    seal_source,
    stabletoolbench_source,
    toucan_source,
)
from ._importer import ImportContext, Importer
from .model import Catalog, SourceReport
from .store import (
    CatalogFileError,
    catalog_fingerprint,
    catalog_path,
    read_catalog,
    save_catalog,
    source_fingerprint,
)

__all__ = ["IMPORTERS", "build_catalog", "default_sources", "load_catalog", "resolve_sources"]

logger = logging.getLogger(__name__)

IMPORTERS: dict[str, Importer] = {
    importer.name: importer
    for importer in (
        botocore_source.IMPORTER,
        google_source.IMPORTER,
        toucan_source.IMPORTER,
        openapi_source.IMPORTER,
        stabletoolbench_source.IMPORTER,
        seal_source.IMPORTER,
    )
}
_EXTRA = "builtin"


def default_sources() -> dict[str, Path]:
    """Every source whose default data is present on this machine, by name."""
    found = {name: importer.default_path() for name, importer in IMPORTERS.items()}
    return {name: path for name, path in found.items() if path is not None and path.exists()}


def resolve_sources(sources: Mapping[str, Path] | None) -> dict[str, Path]:
    """Check ``sources`` (None: :func:`default_sources`) and return them in build order.

    Raises:
        ConfigError: a name no importer has, or a path that does not exist.
    """
    chosen = default_sources() if sources is None else dict(sources)
    unknown = sorted(set(chosen) - set(IMPORTERS))
    if unknown:
        raise ConfigError(
            f"unknown catalog source(s) {', '.join(unknown)}; known: {', '.join(IMPORTERS)}"
        )
    for name, path in chosen.items():
        if not Path(path).exists():
            raise ConfigError(f"catalog source {name}: path {path} does not exist")
    return {name: Path(chosen[name]) for name in IMPORTERS if name in chosen}


def _progress(enabled: bool) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description:<16}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[records]:>7} tools"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=not enabled,
    )


def build_catalog(
    sources: dict[str, Path] | None = None,
    *,
    progress: bool = True,
    extra: Iterable[ToolRecord] = (),
) -> Catalog:
    """Import every source and merge the records into one catalog (each tool id once).

    Args:
        sources: source name -> data path; None imports :func:`default_sources`.
        progress: show a rich progress display on stderr.
        extra: records to put first (the project's built-in catalog), reported as ``builtin``.

    Raises:
        ConfigError: an unknown source name or a missing path.
    """
    chosen = resolve_sources(sources)
    present = frozenset(chosen)
    records: dict[str, ToolRecord] = {}
    reports: dict[str, SourceReport] = {}
    versions: dict[str, str] = {}
    extra_records = list(extra)
    if extra_records:
        report = reports.setdefault(_EXTRA, SourceReport(_EXTRA))
        _add(records, extra_records, report)
        versions[_EXTRA] = catalog_fingerprint(
            {record.id: record.model_dump_json() for record in extra_records}
        )
    with _progress(progress) as bar:
        for name, path in chosen.items():
            importer = IMPORTERS[name]
            report = reports[name] = SourceReport(name)
            versions[name] = source_fingerprint(path)
            task = bar.add_task(name, total=importer.units(path), records=0)

            def advance(count: int = 1, task: int = task) -> None:
                bar.advance(task, count)

            context = ImportContext(report=report, present=present, advance=advance)
            _add(records, importer.read(path, context), report)
            bar.update(task, records=report.imported, completed=bar.tasks[task].total)
            logger.info("catalog source %s: %s", name, report.to_json())
    return Catalog(
        records=list(records.values()),
        reports=reports,
        versions=versions,
        fingerprint=catalog_fingerprint(versions),
    )


def _add(records: dict[str, ToolRecord], new: Iterable[ToolRecord], report: SourceReport) -> None:
    for record in new:
        if record.id in records:
            report.merge("duplicate_id")
            continue
        records[record.id] = record
        report.imported += 1


def load_catalog(
    path: Path | None = None,
    *,
    sources: dict[str, Path] | None = None,
    build: bool = True,
    progress: bool = False,
) -> Catalog:
    """Load a catalog file, or the cached build for ``sources`` (building it when missing).

    Args:
        path: an explicit catalog file; when given, ``sources`` and ``build`` are ignored.
        sources: as for :func:`build_catalog`; selects the cache entry by their versions.
        build: build and cache the catalog when no valid cached one exists.
        progress: show progress while building.

    Raises:
        CatalogFileError: ``path`` is unusable, or nothing is cached and ``build`` is False.
        ConfigError: an unknown source name or a missing path.
    """
    if path is not None:
        return read_catalog(path)
    chosen = resolve_sources(sources)
    versions = {name: source_fingerprint(p) for name, p in chosen.items()}
    target = catalog_path(catalog_fingerprint(versions))
    if target.exists():
        try:
            return read_catalog(target)
        except CatalogFileError as error:
            logger.warning("rebuilding the catalog: %s", error)
    if not build:
        raise CatalogFileError(
            f"no cached catalog at {target}; run `paraagent toolenv catalog build`"
        )
    catalog = build_catalog(chosen, progress=progress)
    save_catalog(catalog, target)
    return catalog

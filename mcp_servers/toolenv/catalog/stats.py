"""Counts over a catalog: by source, schema quality, provider and category, and typed share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from mcp_servers.toolenv.records import ToolRecord

from .model import SYNTHETIC_QUALITY, Catalog

__all__ = ["CatalogStats", "catalog_stats", "is_typed", "stats_tables"]

_TYPE_KEYS = ("type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref")


def is_typed(record: ToolRecord) -> bool:
    """True when every top-level input property declares a type (and the schema is not crawled)."""
    if record.schema_quality == "crawled":
        return False
    properties = record.input_schema.get("properties") or {}
    return all(
        isinstance(prop, Mapping) and any(key in prop for key in _TYPE_KEYS)
        for prop in properties.values()
    )


@dataclass
class CatalogStats:
    """Summary counts of a catalog (``real`` excludes LLM-made records)."""

    total: int
    real: int
    typed: int
    with_output: int
    by_source: dict[str, int]
    by_quality: dict[str, int]
    by_category: dict[str, int]
    by_provider: dict[str, int]
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def typed_share(self) -> float:
        """The fraction of records whose input properties are all typed."""
        return self.typed / self.total if self.total else 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready view (``providers`` is the number of providers, not the list)."""
        return {
            "total": self.total,
            "real": self.real,
            "typed": self.typed,
            "typed_share": round(self.typed_share, 4),
            "with_output": self.with_output,
            "providers": len(self.by_provider),
            "by_source": self.by_source,
            "by_quality": self.by_quality,
            "by_category": self.by_category,
            "reports": self.reports,
        }


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return dict(counter.most_common())


def catalog_stats(catalog: Catalog) -> CatalogStats:
    """Count ``catalog``'s records by source, quality, category and provider."""
    records = catalog.records
    return CatalogStats(
        total=len(records),
        real=sum(1 for r in records if r.schema_quality != SYNTHETIC_QUALITY),
        typed=sum(1 for r in records if is_typed(r)),
        with_output=sum(1 for r in records if r.output_schema or r.response_template),
        by_source=_sorted(Counter(r.source for r in records)),
        by_quality=_sorted(Counter(r.schema_quality or "builtin" for r in records)),
        by_category=_sorted(Counter(r.category or "uncategorized" for r in records)),
        by_provider=_sorted(Counter(r.provider for r in records)),
        reports={name: report.to_json() for name, report in catalog.reports.items()},
    )


def stats_tables(stats: CatalogStats, *, top: int = 15) -> list[Table]:
    """Rich tables for the CLI: totals, sources (with import reports), top categories/providers."""
    totals = Table(title="ToolEnv catalog")
    totals.add_column("measure")
    totals.add_column("value", justify="right")
    totals.add_row("tools", f"{stats.total:,}")
    totals.add_row("real interfaces (excl. synthetic)", f"{stats.real:,}")
    totals.add_row("typed input schemas", f"{stats.typed:,} ({stats.typed_share:.1%})")
    totals.add_row("with output schema/template", f"{stats.with_output:,}")
    totals.add_row("providers", f"{len(stats.by_provider):,}")
    sources = Table(title="by source")
    for column in ("source", "tools", "skipped", "merged", "repaired"):
        sources.add_column(column, justify="left" if column == "source" else "right")
    for name, count in stats.by_source.items():
        report = stats.reports.get(name, {})
        sources.add_row(
            name,
            f"{count:,}",
            f"{sum(report.get('skipped', {}).values()):,}",
            f"{sum(report.get('merged', {}).values()):,}",
            f"{sum(report.get('repaired', {}).values()):,}",
        )
    tables = [totals, sources]
    for title, counts in (("categories", stats.by_category), ("providers", stats.by_provider)):
        table = Table(title=f"top {top} {title} of {len(counts):,}")
        table.add_column(title[:-1] if title == "providers" else "category")
        table.add_column("tools", justify="right")
        for key, count in list(counts.items())[:top]:
            table.add_row(key, f"{count:,}")
        tables.append(table)
    return tables

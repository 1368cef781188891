"""The built catalog and the per-source import reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_servers.toolenv.records import ToolRecord

__all__ = ["SYNTHETIC_QUALITY", "Catalog", "SourceReport"]

SYNTHETIC_QUALITY = "synthetic"


@dataclass
class SourceReport:
    """What one importer did: records kept, and counted reasons for everything else.

    ``skipped`` counts records (or files) left out, ``repaired`` counts fixes applied to records
    that were kept, ``merged`` counts duplicates folded into a record already in the catalog.
    """

    name: str
    imported: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    merged: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, count: int = 1) -> None:
        """Count ``count`` records left out for ``reason``."""
        self.skipped[reason] += count

    def repair(self, reason: str, count: int = 1) -> None:
        """Count ``count`` fixes of kind ``reason``."""
        self.repaired[reason] += count

    def merge(self, reason: str, count: int = 1) -> None:
        """Count ``count`` duplicates merged for ``reason``."""
        self.merged[reason] += count

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready view (used by the cache header and ``stats``)."""
        return {
            "name": self.name,
            "imported": self.imported,
            "skipped": dict(sorted(self.skipped.items())),
            "repaired": dict(sorted(self.repaired.items())),
            "merged": dict(sorted(self.merged.items())),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SourceReport:
        """Rebuild a report written by :meth:`to_json`."""
        return cls(
            name=data["name"],
            imported=int(data.get("imported", 0)),
            skipped=Counter(data.get("skipped", {})),
            repaired=Counter(data.get("repaired", {})),
            merged=Counter(data.get("merged", {})),
        )


@dataclass
class Catalog:
    """An ordered collection of unique tool records plus how it was built.

    ``versions`` maps each source name to the fingerprint of the data it was read from;
    ``fingerprint`` hashes them all (the cache key). A catalog read from disk holds
    :class:`~mcp_servers.toolenv.catalog.store.LazyRecords` (schemas parsed on first use).
    """

    records: list[ToolRecord]
    reports: dict[str, SourceReport] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    fingerprint: str = ""
    _by_id: dict[str, ToolRecord] | None = field(default=None, init=False, repr=False)

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[ToolRecord]:
        return iter(self.records)

    def get(self, identifier: str) -> ToolRecord | None:
        """The record with tool id ``identifier`` (``<provider>/<name>``), if any."""
        lookup = getattr(self.records, "get", None)
        if lookup is not None:
            return lookup(identifier)
        if self._by_id is None:
            self._by_id = {record.id: record for record in self.records}
        return self._by_id.get(identifier)

    @property
    def real_count(self) -> int:
        """How many records are real interfaces (everything but LLM-made ones)."""
        rows = getattr(self.records, "entries", self.records)
        return sum(1 for row in rows if row.schema_quality != SYNTHETIC_QUALITY)

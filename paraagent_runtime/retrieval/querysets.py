"""The retrieval query sets: StableToolBench and Seal-Tools queries in train, dev and test parts.

Every query belongs to exactly one part, fixed by its id alone, so the parts never change:

* ``train``: Seal-Tools' own ``dev.jsonl`` (free to train a retriever on);
* ``dev``: 30 % of every upstream *test* file (a stable hash of the query id; for
  StableToolBench the same queries as the evaluation's dev part since it existed), the only
  queries any setting may be tuned or selected on;
* ``test``: the remaining 70 %, touched only to report.

Each set keeps its own tool pool (StableToolBench's 2,220 RapidAPI endpoints, Seal-Tools' 4,076
APIs). A query needing two or more distinct tools is *multi-tool*
(:attr:`RetrievalQuery.multi_tool`); single-tool queries are reported separately.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path
from typing import Literal

from ..errors import ConfigError
from .seal_tools import load_seal_tools
from .stabletoolbench import RetrievalBench, RetrievalQuery, load_stabletoolbench

__all__ = [
    "DEV_FRACTION",
    "QUERY_PARTS",
    "QUERY_SETS",
    "QueryKind",
    "default_data_dir",
    "load_query_sets",
    "query_part",
]

QUERY_PARTS = ("train", "dev", "test")
"""The parts a query can belong to (see the module docstring)."""
DEV_FRACTION = 0.3
"""Share of each upstream test file in the ``dev`` part."""
QueryKind = Literal["single", "multi"]
"""Single-tool (one distinct tool needed) or multi-tool (two or more) queries."""
QUERY_SETS = {"stabletoolbench": load_stabletoolbench, "seal-tools": load_seal_tools}
"""Each query set's folder under the data directory (also its name) and its loader."""
_TRAIN_SPLITS = frozenset({"dev"})
"""Upstream splits that are not test data (Seal-Tools' ``dev.jsonl``)."""


def default_data_dir() -> Path:
    """The shared data folder: ``$PARAAGENT_DATA_DIR``, else ``<repo>/../shared/data``.

    Resolved from this file's location, never from the working directory.
    """
    explicit = os.environ.get("PARAAGENT_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return Path(__file__).resolve().parents[3] / "shared" / "data"


def query_part(query: RetrievalQuery) -> str:
    """The part (``train``, ``dev`` or ``test``) ``query`` belongs to."""
    if query.group == "seal" and query.split in _TRAIN_SPLITS:
        return "train"
    bucket = int(hashlib.sha256(query.query_id.encode()).hexdigest()[:8], 16) % 1000
    return "dev" if bucket < DEV_FRACTION * 1000 else "test"


def load_query_sets(
    data_dir: str | Path | None = None,
    *,
    parts: Collection[str] = ("dev",),
    kind: QueryKind | None = None,
    sets: Collection[str] = tuple(QUERY_SETS),
) -> list[RetrievalBench]:
    """Load StableToolBench and Seal-Tools with the queries of ``parts`` (default: dev only).

    Args:
        data_dir: The shared data folder (default :func:`default_data_dir`); it holds
            ``stabletoolbench/`` and ``seal-tools/``.
        parts: Which parts to keep; ask for ``test`` only to report final numbers.
        kind: Keep only ``single``- or ``multi``-tool queries (default: both).
        sets: Which query sets (default: all of :data:`QUERY_SETS`).

    Returns:
        One bench per data set (``stabletoolbench``, ``seal-tools``), each with its full tool
        pool and the selected queries.

    Raises:
        ConfigError: An unknown part, kind or set, or a data set that cannot be read.
    """
    unknown = (set(parts) - set(QUERY_PARTS)) | (set(sets) - set(QUERY_SETS))
    if unknown or kind not in (None, "single", "multi"):
        raise ConfigError(
            f"unknown query part or set {sorted(unknown)} or kind {kind!r}: parts are "
            f"{', '.join(QUERY_PARTS)}; sets {', '.join(QUERY_SETS)}; kinds single and multi"
        )
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    benches = [loader(root / name) for name, loader in QUERY_SETS.items() if name in sets]
    wanted_multi = None if kind is None else kind == "multi"
    return [
        replace(
            bench,
            queries=[
                query
                for query in bench.queries
                if query_part(query) in parts
                and (wanted_multi is None or query.multi_tool == wanted_multi)
            ],
        )
        for bench in benches
    ]

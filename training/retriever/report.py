"""``python -m training.retriever.report``: trained vs untrained on a query-set part, to files.

Runs :func:`.compare.compare_models` on every query set of
:func:`~paraagent_runtime.retrieval.querysets.load_query_sets` for one part (``dev`` to choose;
``test`` once, to report) and writes ``<out>.json`` (summaries and per-query rankings) and
``<out>.md`` (the tables).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from paraagent_runtime.retrieval import default_index_dir
from paraagent_runtime.retrieval.bundled import BASE_MODEL_NAME, TOOLSPACE_MODEL_NAME
from paraagent_runtime.retrieval.querysets import QUERY_PARTS, QUERY_SETS, load_query_sets

from .compare import compare_models, comparison_table

__all__ = ["main", "write_report"]


async def write_report(
    part: str,
    out: Path,
    *,
    modes: tuple[str, ...],
    index_dir: Path | None,
    sets: tuple[str, ...] = tuple(QUERY_SETS),
) -> dict:
    """Compare the base and the tool-space model on ``part`` of ``sets``; write ``out``.json/.md."""
    results = {}
    tables = []
    names = [name for name in QUERY_SETS if name in sets]  # load_query_sets' order
    for set_name, bench in zip(names, load_query_sets(parts=(part,), sets=sets), strict=True):
        name = f"{set_name}:{part}"
        comparison = await compare_models(
            name,
            bench.tools,
            bench.queries,
            models=(BASE_MODEL_NAME, TOOLSPACE_MODEL_NAME),
            modes=modes,
            index_dir=index_dir,
        )
        summary = comparison.summary()
        results[name] = {"summary": summary, "per_query": comparison.per_query()}
        tables.append(comparison_table(summary))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    out.with_suffix(".md").write_text("\n\n".join(tables) + "\n", encoding="utf-8")
    return results


def main() -> None:
    """Parse the arguments and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=QUERY_PARTS, default="dev")
    parser.add_argument("--out", type=Path, required=True, help="Path stem of the .json/.md.")
    parser.add_argument("--modes", default="dense,hybrid,coverage")
    parser.add_argument("--sets", default=",".join(QUERY_SETS))
    parser.add_argument("--index-dir", type=Path, default=default_index_dir() / "retriever-compare")
    args = parser.parse_args()
    asyncio.run(
        write_report(
            args.part,
            args.out,
            modes=tuple(args.modes.split(",")),
            index_dir=args.index_dir,
            sets=tuple(args.sets.split(",")),
        )
    )


if __name__ == "__main__":
    main()

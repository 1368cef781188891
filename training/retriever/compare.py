"""Trained vs untrained embedder on a retrieval query set: per-query metrics, intervals, table.

Each model gets its own :class:`~paraagent_runtime.retrieval.HybridToolSearch` over the same
pool and answers the same queries in each search mode (``dense``, ``hybrid``, …) through the
public ``search_many``, so the numbers are what ``search_tools`` users get. Queries are split
into single-tool and multi-tool ones (:attr:`RetrievalQuery.multi_tool`); every mean has a
bootstrap 95% interval and each mode's trained − untrained difference a paired bootstrap
interval (:mod:`paraagent_runtime.intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraagent_runtime.intervals import Interval, bootstrap_mean, paired_bootstrap_difference
from paraagent_runtime.retrieval import HybridToolSearch, RetrievalConfig
from paraagent_runtime.retrieval.metrics import completeness_at_k, ndcg_at_k
from paraagent_runtime.retrieval.stabletoolbench import RetrievalQuery
from paraagent_runtime.tools import ToolSpec

__all__ = ["METRICS", "Comparison", "compare_models", "comparison_table"]

METRICS: dict[str, Any] = {
    "ndcg@5": lambda ranked, gold: ndcg_at_k(ranked, gold, 5),
    "completeness@5": lambda ranked, gold: completeness_at_k(ranked, gold, 5),
}
_SUBSETS = ("single", "multi", "all")


@dataclass
class Comparison:
    """Per-query scores and their summaries for each (model, mode) on one query set."""

    name: str
    models: tuple[str, str]
    modes: tuple[str, ...]
    pool_size: int
    query_ids: list[str]
    subsets: dict[str, list[int]]
    rankings: dict[str, dict[str, list[list[str]]]]
    scores: dict[str, dict[str, dict[str, list[float]]]]

    def summary(self) -> dict[str, Any]:
        """Means with intervals per subset/model/mode/metric, and the paired differences."""
        baseline, trained = self.models
        means: dict[str, Any] = {}
        differences: dict[str, Any] = {}
        for subset, members in self.subsets.items():
            means[subset] = {
                model: {
                    mode: {
                        metric: _interval(bootstrap_mean([values[i] for i in members]))
                        for metric, values in self.scores[model][mode].items()
                    }
                    for mode in self.modes
                }
                for model in self.models
            }
            differences[subset] = {
                mode: {
                    metric: _interval(
                        paired_bootstrap_difference(
                            [self.scores[trained][mode][metric][i] for i in members],
                            [self.scores[baseline][mode][metric][i] for i in members],
                        )
                    )
                    for metric in METRICS
                }
                for mode in self.modes
            }
        return {
            "name": self.name,
            "pool_size": self.pool_size,
            "queries": {subset: len(members) for subset, members in self.subsets.items()},
            "models": {"untrained": baseline, "trained": trained},
            "means": means,
            "trained_minus_untrained": differences,
        }

    def per_query(self) -> list[dict[str, Any]]:
        """One row per query: its id, and each (model, mode)'s top 5 and scores."""
        rows = []
        for index, query_id in enumerate(self.query_ids):
            row: dict[str, Any] = {"query_id": query_id}
            for model in self.models:
                for mode in self.modes:
                    row[f"{model}|{mode}"] = {
                        "top5": self.rankings[model][mode][index][:5],
                        **{m: v[index] for m, v in self.scores[model][mode].items()},
                    }
            rows.append(row)
        return rows


def _interval(interval: Interval) -> dict[str, float]:
    return {
        "estimate": round(100 * interval.estimate, 2),
        "low": round(100 * interval.low, 2),
        "high": round(100 * interval.high, 2),
        "n": interval.n,
    }


async def compare_models(
    name: str,
    tools: Sequence[ToolSpec],
    queries: Sequence[RetrievalQuery],
    *,
    models: tuple[str, str],
    modes: Sequence[str] = ("dense", "hybrid"),
    index_dir: Path | None = None,
) -> Comparison:
    """Rank ``queries`` over ``tools`` with both ``models`` in every mode and score them.

    Args:
        name: The query set's name (for the report).
        tools: The pool.
        queries: The queries with their gold tool ids (all of them in the pool).
        models: ``(untrained, trained)`` encoder names or directories.
        modes: Search modes to compare.
        index_dir: Where each model's embeddings are cached (``None``: memory only).
    """
    texts = [query.text for query in queries]
    rankings: dict[str, dict[str, list[list[str]]]] = {}
    scores: dict[str, dict[str, dict[str, list[float]]]] = {}
    for model in models:
        index = HybridToolSearch(RetrievalConfig(model=model, index_dir=index_dir))
        await index.update(list(tools))
        rankings[model], scores[model] = {}, {}
        for mode in modes:
            found = await index.search_many(texts, top_k=10, mode=mode)
            ranked = [[tool for tool, _ in hits] for hits in found]
            rankings[model][mode] = ranked
            scores[model][mode] = {
                metric: [score(ranked[i], query.gold) for i, query in enumerate(queries)]
                for metric, score in METRICS.items()
            }
    single = [i for i, query in enumerate(queries) if not query.multi_tool]
    multi = [i for i, query in enumerate(queries) if query.multi_tool]
    return Comparison(
        name=name,
        models=models,
        modes=tuple(modes),
        pool_size=len({tool.id for tool in tools}),
        query_ids=[query.query_id for query in queries],
        subsets={"single": single, "multi": multi, "all": list(range(len(queries)))},
        rankings=rankings,
        scores=scores,
    )


def comparison_table(summary: dict[str, Any]) -> str:
    """A markdown table of a :meth:`Comparison.summary`: untrained, trained, difference."""
    lines = [
        f"**{summary['name']}** (pool {summary['pool_size']:,}; queries "
        + ", ".join(f"{s} {n}" for s, n in summary["queries"].items())
        + ")",
        "",
        "| subset | mode | metric | untrained | trained | trained − untrained (95% CI) |",
        "|---|---|---|---:|---:|---|",
    ]
    baseline, trained = summary["models"]["untrained"], summary["models"]["trained"]
    for subset in _SUBSETS:
        if not summary["queries"].get(subset):
            continue
        for mode, by_metric in summary["trained_minus_untrained"][subset].items():
            for metric, diff in by_metric.items():
                before = summary["means"][subset][baseline][mode][metric]["estimate"]
                after = summary["means"][subset][trained][mode][metric]["estimate"]
                lines.append(
                    f"| {subset} | {mode} | {metric} | {before:.1f} | {after:.1f} | "
                    f"{diff['estimate']:+.1f} ({diff['low']:+.1f} to {diff['high']:+.1f}) |"
                )
    return "\n".join(lines)

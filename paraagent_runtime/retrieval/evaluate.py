"""The retrieval evaluation: BM25 vs dense vs hybrid (vs re-ranked) on StableToolBench.

Fusion is tuned on a held-out *dev* part of the queries (a stable 30 % by query id) and reported
on the remaining *test* part, so the hybrid numbers are not fitted to the queries they are
measured on. Distractor tools (e.g. the ToolEnv catalog, wired by the CLI composition root) can
be added to the pool; ``paraagent eval retrieval`` is :mod:`paraagent_runtime.cli.eval_retrieval`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MissingExtraError
from ..plotting import pyplot, save_figure
from ..tools import ToolSpec
from .config import RetrievalConfig, SearchMode
from .fusion import FusionMethod, Ranking, fuse
from .metrics import completeness_at_k, ndcg_at_k, recall_at_k
from .stabletoolbench import RetrievalQuery, load_stabletoolbench

__all__ = ["EvalReport", "evaluate_retrieval", "write_report"]

logger = logging.getLogger(__name__)

KS = (1, 3, 5, 10)
TOOLOMNI_CONTEXT = {
    "note": "ToolOmni (arXiv 2604.13787), multi-domain ToolBench NDCG, a different corpus",
    "bm25": 18.3,
    "embedding": 37.1,
    "toolomni": 78.3,
}
_GRID_WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
_GRID_RRF_K = (5.0, 20.0, 60.0)


@dataclass(frozen=True)
class FusionChoice:
    """One fusion setting of the tuning grid."""

    method: FusionMethod
    dense_weight: float
    rrf_k: float

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"method": self.method.value, "dense_weight": self.dense_weight, "rrf_k": self.rrf_k}


@dataclass
class EvalReport:
    """Scores per split (``test``, ``all``), system, group and metric (``ndcg@5`` ...)."""

    pool_size: int
    queries: int
    dev_queries: int
    model: str
    tuned: dict[str, Any]
    scores: dict[str, dict[str, dict[str, dict[str, float]]]] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=lambda: dict(TOOLOMNI_CONTEXT))

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "pool_size": self.pool_size,
            "queries": self.queries,
            "dev_queries": self.dev_queries,
            "model": self.model,
            "tuned_fusion": self.tuned,
            "scores": self.scores,
            "context": self.context,
        }


def _is_dev(query: RetrievalQuery, fraction: float) -> bool:
    bucket = int(hashlib.sha256(query.query_id.encode()).hexdigest()[:8], 16) % 1000
    return bucket < fraction * 1000


def _metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k)
        out[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        out[f"completeness@{k}"] = completeness_at_k(ranked, gold, k)
    return out


def _average(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: sum(row[key] for row in rows) / len(rows) for key in rows[0]}


def _fused(pair: tuple[Ranking, Ranking], choice: FusionChoice) -> list[str]:
    dense, lexical = pair
    ranking = fuse(
        dense, lexical, method=choice.method, dense_weight=choice.dense_weight, rrf_k=choice.rrf_k
    )
    return [tool for tool, _ in ranking]


def _tune(
    pairs: Sequence[tuple[Ranking, Ranking]], queries: Sequence[RetrievalQuery]
) -> FusionChoice:
    """The grid setting with the best mean NDCG@5 on ``queries`` (first wins ties)."""
    grid = [
        FusionChoice(FusionMethod.RRF, weight, k)
        for weight, k in itertools.product(_GRID_WEIGHTS, _GRID_RRF_K)
    ] + [FusionChoice(FusionMethod.SCORE, weight, 60.0) for weight in _GRID_WEIGHTS]
    best, best_score = grid[0], -1.0
    for choice in grid:
        score = sum(
            ndcg_at_k(_fused(pair, choice), query.gold, 5)
            for pair, query in zip(pairs, queries, strict=True)
        ) / max(len(queries), 1)
        if score > best_score + 1e-12:
            best, best_score = choice, score
    return best


async def evaluate_retrieval(
    data_dir: str | Path,
    *,
    search: Any | None = None,
    distractors: Sequence[ToolSpec] = (),
    dev_fraction: float = 0.3,
    depth: int = 100,
) -> EvalReport:
    """Run the retrieval evaluation on StableToolBench.

    Args:
        data_dir: The ``stabletoolbench`` data folder.
        search: A :class:`~paraagent_runtime.retrieval.HybridToolSearch` (its encoder, reranker
            and persistence are used); a default one is built when omitted.
        distractors: Extra tools added to the pool (ids clashing with the pool are dropped).
        dev_fraction: Share of queries used to tune the fusion (excluded from ``test``).
        depth: Candidates per retriever before fusion.

    Returns:
        The report; systems are ``bm25``, ``dense``, ``hybrid`` (the index's configured
        fusion), ``hybrid_rrf`` (RRF k=60, equal weights), ``hybrid_tuned`` (best on dev)
        and, when the index has a re-ranker, ``reranked``.
    """
    from .index import HybridToolSearch

    bench = load_stabletoolbench(data_dir)
    index = search if search is not None else HybridToolSearch(RetrievalConfig())
    pool = {tool.id: tool for tool in bench.tools}
    for tool in distractors:
        pool.setdefault(tool.id, tool)
    await index.update(list(pool.values()))
    queries = bench.queries
    texts = [query.text for query in queries]
    pairs = await index.rankings(texts, depth=depth)
    dev = [i for i, query in enumerate(queries) if _is_dev(query, dev_fraction)]
    tuned = _tune([pairs[i] for i in dev], [queries[i] for i in dev])
    config = index.config
    default = FusionChoice(FusionMethod(config.fusion), config.dense_weight, config.rrf_k)
    rrf = FusionChoice(FusionMethod.RRF, 0.5, 60.0)
    systems: dict[str, list[list[str]]] = {
        "bm25": [[tool for tool, _ in lexical] for _, lexical in pairs],
        "dense": [[tool for tool, _ in dense] for dense, _ in pairs],
        "hybrid": [_fused(pair, default) for pair in pairs],
        "hybrid_rrf": [_fused(pair, rrf) for pair in pairs],
        "hybrid_tuned": [_fused(pair, tuned) for pair in pairs],
    }
    if getattr(index, "reranker", None) is not None:
        index.config = _with_fusion(index.config, tuned)
        reranked = await index.search_many(texts, top_k=max(KS), mode=SearchMode.HYBRID)
        systems["reranked"] = [[tool for tool, _ in ranking] for ranking in reranked]
    dev_set = set(dev)
    report = EvalReport(
        pool_size=len(pool),
        queries=len(queries),
        dev_queries=len(dev),
        model=getattr(index.encoder, "name", "?"),
        tuned=tuned.as_dict(),
    )
    groups = sorted({query.group for query in queries})
    for split_name, members in (
        ("test", [i for i in range(len(queries)) if i not in dev_set]),
        ("all", list(range(len(queries)))),
    ):
        report.scores[split_name] = {}
        for system, rankings in systems.items():
            per_query = {i: _metrics(rankings[i], queries[i].gold) for i in members}
            by_group = {"all": _average(list(per_query.values()))}
            for group in groups:
                by_group[group] = _average(
                    [row for i, row in per_query.items() if queries[i].group == group]
                )
            report.scores[split_name][system] = by_group
    return report


def _with_fusion(config: RetrievalConfig, choice: FusionChoice) -> RetrievalConfig:
    from dataclasses import replace

    return replace(
        config, fusion=choice.method, dense_weight=choice.dense_weight, rrf_k=choice.rrf_k
    )


def report_table(report: EvalReport, split: str = "test") -> Any:
    """A rich table of one split: a row per system and group, NDCG/Recall/Completeness@k."""
    from rich.table import Table

    table = Table(title=f"tool retrieval, StableToolBench ({split}; pool {report.pool_size})")
    table.add_column("system")
    table.add_column("group")
    columns = [f"ndcg@{k}" for k in KS] + [
        f"{metric}@{k}" for metric in ("recall", "completeness") for k in (5, 10)
    ]
    for column in columns:
        table.add_column(column.replace("completeness", "comp"), justify="right")
    for system, by_group in report.scores[split].items():
        for group, values in by_group.items():
            if values:
                table.add_row(system, group, *(f"{100 * values[c]:.1f}" for c in columns))
    return table


def write_report(report: EvalReport, out_dir: str | Path) -> list[Path]:
    """Write ``retrieval_eval.json`` and, when matplotlib is installed, ``retrieval_eval.png``.

    Returns:
        The paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "retrieval_eval.json"
    json_path.write_text(json.dumps(report.as_dict(), indent=1), encoding="utf-8")
    written = [json_path]
    try:
        plt = pyplot()
    except MissingExtraError as exc:
        logger.warning("%s; skipping the PNG", exc)
        return written
    scores = report.scores["test"]
    groups = [g for g in next(iter(scores.values())) if any(scores[s][g] for s in scores)]
    figure, axes = plt.subplots(1, len(groups), figsize=(4.5 * len(groups), 3.8), squeeze=False)
    for axis, group in zip(axes[0], groups, strict=True):
        for system, by_group in scores.items():
            axis.plot(
                KS, [100 * by_group[group][f"ndcg@{k}"] for k in KS], marker="o", label=system
            )
        axis.set_title(f"{group} (test split)")
        axis.set_xlabel("k")
        axis.set_ylabel("NDCG@k (%)")
        axis.set_xticks(KS)
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    written.append(save_figure(figure, out / "retrieval_eval.png", dpi=120))
    return written

"""Fusing ranked lists from several retrievers (reciprocal-rank and normalized-score fusion)."""

from __future__ import annotations

import enum
from collections.abc import Sequence

__all__ = ["FusionMethod", "Ranking", "fuse", "reciprocal_rank_fusion", "score_fusion"]

Ranking = Sequence[tuple[str, float]]
"""``(tool_id, score)`` pairs, best first."""


class FusionMethod(enum.StrEnum):
    """How hybrid search combines the dense and the BM25 ranking."""

    RRF = "rrf"
    SCORE = "score"


def reciprocal_rank_fusion(
    rankings: Sequence[Ranking], *, k: float = 60.0, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Combine rankings by ``sum_i w_i / (k + rank_i)`` (rank from 1); ties keep first-seen order.

    Args:
        rankings: Ranked lists, best first; scores are ignored.
        k: The RRF damping constant (larger flattens the head of each list).
        weights: One weight per ranking (default all 1).

    Returns:
        All ids that appear in any ranking with their fused score, best first.
    """
    weights = weights or [1.0] * len(rankings)
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, (item, _) in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda pair: -pair[1])


def _min_max(ranking: Ranking) -> dict[str, float]:
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    span = high - low
    return {item: (score - low) / span if span > 0 else 1.0 for item, score in ranking}


def score_fusion(
    rankings: Sequence[Ranking], *, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Combine rankings by a weighted sum of min-max normalized scores (missing counts as 0).

    Args:
        rankings: Ranked lists with raw scores, best first (higher is better).
        weights: One weight per ranking (default all 1).

    Returns:
        All ids that appear in any ranking with their fused score, best first.
    """
    weights = weights or [1.0] * len(rankings)
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for item, score in _min_max(ranking).items():
            fused[item] = fused.get(item, 0.0) + weight * score
    return sorted(fused.items(), key=lambda pair: -pair[1])


def fuse(
    dense: Ranking,
    lexical: Ranking,
    *,
    method: FusionMethod = FusionMethod.RRF,
    dense_weight: float = 0.5,
    rrf_k: float = 60.0,
) -> list[tuple[str, float]]:
    """Fuse a dense and a lexical ranking; ``dense_weight`` in [0, 1] balances the two.

    Args:
        dense: The embedding ranking.
        lexical: The BM25 ranking.
        method: Reciprocal-rank or normalized-score fusion.
        dense_weight: Weight of the dense list; the lexical list gets ``1 - dense_weight``.
        rrf_k: The RRF constant (used by :attr:`FusionMethod.RRF` only).

    Returns:
        The fused ranking, best first.
    """
    weights = (dense_weight, 1.0 - dense_weight)
    if FusionMethod(method) is FusionMethod.RRF:
        return reciprocal_rank_fusion([dense, lexical], k=rrf_k, weights=weights)
    return score_fusion([dense, lexical], weights=weights)

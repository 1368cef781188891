"""Fusing ranked lists from several retrievers: reciprocal-rank, z-score and min-max fusion.

Min-max normalization gives whichever tool tops a list exactly 1 and so a fixed share of the fused
score whatever its margin; rank- and z-score-based fusion do not have that artifact.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

__all__ = [
    "FusionMethod",
    "Ranking",
    "fuse",
    "fuse_many",
    "reciprocal_rank_fusion",
    "score_fusion",
    "zscore_fusion",
]

Ranking = Sequence[tuple[str, float]]
"""``(tool_id, score)`` pairs, best first."""


class FusionMethod(enum.StrEnum):
    """How hybrid search combines the dense and the BM25 ranking."""

    RRF = "rrf"
    ZSCORE = "zscore"
    SCORE = "score"
    """Min-max normalized scores (the fusion before issue #27, kept for comparison)."""


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


def _z(ranking: Ranking) -> tuple[dict[str, float], float]:
    """Each item's z-score within ``ranking``, and the score a missing item gets (the lowest)."""
    scores = [float(score) for _, score in ranking]
    mean = sum(scores) / len(scores)
    spread = (sum((score - mean) ** 2 for score in scores) / len(scores)) ** 0.5
    if spread <= 0:
        return {item: 0.0 for item, _ in ranking}, 0.0
    normalized = {item: (float(score) - mean) / spread for item, score in ranking}
    return normalized, min(normalized.values())


def zscore_fusion(
    rankings: Sequence[Ranking], *, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Combine rankings by a weighted sum of z-scored scores.

    Each list's scores are standardized over its own candidates; an item missing from a list gets
    that list's lowest z-score (it ranked below every candidate shown).

    Args:
        rankings: Ranked lists with raw scores, best first (higher is better).
        weights: One weight per ranking (default all 1).

    Returns:
        All ids that appear in any ranking with their fused score, best first (ties keep
        first-seen order).
    """
    weights = weights or [1.0] * len(rankings)
    normalized = [_z(ranking) for ranking in rankings if ranking]
    kept = [weight for ranking, weight in zip(rankings, weights, strict=True) if ranking]
    items = dict.fromkeys(item for ranking in rankings for item, _ in ranking)
    fused = {
        item: sum(
            weight * z.get(item, floor) for (z, floor), weight in zip(normalized, kept, strict=True)
        )
        for item in items
    }
    return sorted(fused.items(), key=lambda pair: -pair[1])


def fuse_many(
    rankings: Sequence[Ranking],
    weights: Sequence[float],
    *,
    method: FusionMethod = FusionMethod.RRF,
    rrf_k: float = 60.0,
) -> list[tuple[str, float]]:
    """Fuse any number of weighted rankings with ``method``.

    Args:
        rankings: Ranked lists with raw scores, best first.
        weights: One weight per ranking.
        method: Reciprocal-rank, z-score or min-max fusion.
        rrf_k: The RRF constant (used by :attr:`FusionMethod.RRF` only).

    Returns:
        The fused ranking, best first.
    """
    method = FusionMethod(method)
    if method is FusionMethod.RRF:
        return reciprocal_rank_fusion(rankings, k=rrf_k, weights=weights)
    if method is FusionMethod.ZSCORE:
        return zscore_fusion(rankings, weights=weights)
    return score_fusion(rankings, weights=weights)


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
        method: Reciprocal-rank, z-score or min-max fusion.
        dense_weight: Weight of the dense list; the lexical list gets ``1 - dense_weight``.
        rrf_k: The RRF constant (used by :attr:`FusionMethod.RRF` only).

    Returns:
        The fused ranking, best first.
    """
    return fuse_many(
        [dense, lexical], (dense_weight, 1.0 - dense_weight), method=method, rrf_k=rrf_k
    )

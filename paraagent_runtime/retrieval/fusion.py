"""Fusing ranked lists from several retrievers: reciprocal-rank, z-score and min-max fusion.

Min-max normalization gives whichever tool tops a list exactly 1 and so a fixed share of the fused
score whatever its margin; rank- and z-score-based fusion do not have that artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .config import FusionMethod

__all__ = [
    "FusionMethod",
    "Normalized",
    "Ranking",
    "fuse",
    "fuse_many",
    "normalize",
    "weighted_sum",
    "reciprocal_rank_fusion",
    "score_fusion",
    "zscore_fusion",
]

Ranking = Sequence[tuple[str, float]]
"""``(tool_id, score)`` pairs, best first."""


@dataclass(frozen=True)
class Normalized:
    """One ranking's normalized scores, and the score of an item the ranking does not list."""

    values: dict[str, float]
    floor: float = 0.0


def _z(ranking: Ranking) -> Normalized:
    """Each item's z-score within ``ranking``; a missing item gets the lowest one."""
    scores = np.asarray([score for _, score in ranking], dtype=np.float64)
    spread = float(scores.std())
    if spread <= 0:
        return Normalized(dict.fromkeys((item for item, _ in ranking), 0.0))
    z = (scores - scores.mean()) / spread
    return Normalized(
        dict(zip((item for item, _ in ranking), z.tolist(), strict=True)), float(z.min())
    )


def _min_max(ranking: Ranking) -> Normalized:
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    span = high - low
    return Normalized({item: (score - low) / span if span > 0 else 1.0 for item, score in ranking})


def normalize(
    ranking: Ranking, method: FusionMethod = FusionMethod.RRF, *, rrf_k: float = 60.0
) -> Normalized:
    """``ranking``'s scores as ``method`` fuses them (reciprocal rank, z-score or min-max).

    Normalizing a list once lets one list take part in several fusions (a coverage search
    fuses the whole request's lists into every need's ranking).
    """
    method = FusionMethod(method)
    if not ranking:
        return Normalized({})
    if method is FusionMethod.RRF:
        return Normalized(
            {item: 1.0 / (rrf_k + rank) for rank, (item, _) in enumerate(ranking, start=1)}
        )
    return _z(ranking) if method is FusionMethod.ZSCORE else _min_max(ranking)


def weighted_sum(parts: Sequence[tuple[Normalized, float]]) -> list[tuple[str, float]]:
    """Sum normalized lists with weights; an item a list lacks gets that list's floor.

    Returns:
        Every listed item with its fused score, best first (ties keep first-seen order).
    """
    base = sum(weight * part.floor for part, weight in parts)
    fused: dict[str, float] = {}
    for part, weight in parts:
        for item, value in part.values.items():
            fused[item] = fused.get(item, base) + weight * (value - part.floor)
    return sorted(fused.items(), key=lambda pair: -pair[1])


def fuse_many(
    rankings: Sequence[Ranking],
    weights: Sequence[float] | None = None,
    *,
    method: FusionMethod = FusionMethod.RRF,
    rrf_k: float = 60.0,
) -> list[tuple[str, float]]:
    """Fuse any number of weighted rankings with ``method``.

    Args:
        rankings: Ranked lists with raw scores, best first.
        weights: One weight per ranking (default all 1).
        method: Reciprocal-rank, z-score or min-max fusion.
        rrf_k: The RRF constant (used by :attr:`FusionMethod.RRF` only).

    Returns:
        The fused ranking, best first.
    """
    weights = weights if weights is not None else [1.0] * len(rankings)
    return weighted_sum(
        [
            (normalize(ranking, method, rrf_k=rrf_k), weight)
            for ranking, weight in zip(rankings, weights, strict=True)
        ]
    )


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
    return fuse_many(rankings, weights, method=FusionMethod.RRF, rrf_k=k)


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
    return fuse_many(rankings, weights, method=FusionMethod.SCORE)


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
    return fuse_many(rankings, weights, method=FusionMethod.ZSCORE)


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

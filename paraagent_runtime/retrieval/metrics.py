"""Retrieval metrics with binary relevance: Recall@k, NDCG@k and Completeness@k."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

__all__ = ["completeness_at_k", "ndcg_at_k", "recall_at_k"]


def _check(k: int, gold: Collection[str]) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not gold:
        raise ValueError("a query needs at least one gold tool")


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Fraction of the gold tools found in the first ``k`` results.

    Raises:
        ValueError: ``k < 1`` or ``gold`` is empty.
    """
    _check(k, gold)
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def ndcg_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Normalized discounted cumulative gain at ``k`` (gain 1 per gold tool, log2 discount).

    The ideal ranking puts ``min(k, |gold|)`` gold tools first, so a perfect top-k scores 1.

    Raises:
        ValueError: ``k < 1`` or ``gold`` is empty.
    """
    _check(k, gold)
    wanted = set(gold)
    seen: set[str] = set()
    dcg = 0.0
    for rank, item in enumerate(ranked[:k], start=1):
        if item in wanted and item not in seen:
            dcg += 1.0 / math.log2(rank + 1)
            seen.add(item)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal


def completeness_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when every gold tool is in the first ``k`` results, else 0.0.

    Raises:
        ValueError: ``k < 1`` or ``gold`` is empty.
    """
    _check(k, gold)
    return 1.0 if set(gold) <= set(ranked[:k]) else 0.0

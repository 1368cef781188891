"""Merging per-need rankings with coverage: every need gets a slot before any need gets two.

A multi-intent request is split into needs (:mod:`.decompose`); each need is searched on its own,
its lists fused with the whole request's (a little context: "the order history *for my Rewards
account*"), and the per-need rankings are merged round-robin. Within a round each need takes its
best tool not taken yet; a diversity penalty (maximal marginal relevance across providers) makes
a need prefer a tool from a provider the results do not have yet over five interchangeable
QR-code APIs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .fusion import FusionMethod, Ranking, fuse_many

__all__ = ["CoverageHit", "cover", "need_ranking"]

_WINDOW = 10
"""How deep into a need's ranking the diversity penalty may reach for a better-spread tool."""


@dataclass(frozen=True)
class CoverageHit:
    """One merged result: the tool, its score in its need's ranking, and that need's index."""

    tool: str
    score: float
    need: int


def need_ranking(
    need: tuple[Ranking, Ranking],
    whole: tuple[Ranking, Ranking],
    *,
    method: FusionMethod,
    dense_weight: float,
    rrf_k: float,
    context: float,
) -> list[tuple[str, float]]:
    """The fused ranking of one need, with a ``context`` share from the whole query's lists.

    Args:
        need: The need's ``(dense, bm25)`` rankings.
        whole: The whole query's ``(dense, bm25)`` rankings.
        method: How the four lists are fused.
        dense_weight: Weight of the dense lists; BM25 gets the rest.
        rrf_k: The RRF constant.
        context: Share of the fused score that comes from the whole query (0: the need alone).
    """
    own, shared = 1.0 - context, context
    lexical = 1.0 - dense_weight
    return fuse_many(
        [*need, *whole],
        (own * dense_weight, own * lexical, shared * dense_weight, shared * lexical),
        method=method,
        rrf_k=rrf_k,
    )


def cover(
    rankings: Sequence[Sequence[tuple[str, float]]],
    k: int,
    *,
    provider: Callable[[str], str] | Mapping[str, str] | None = None,
    diversity: float = 0.0,
) -> list[CoverageHit]:
    """Merge per-need rankings round-robin into ``k`` results (fewer when the lists run out).

    Each round visits the needs in order; a need takes, among its first ten tools not taken yet,
    the one with the best ``position + diversity * (results so far from its provider)``. Every
    need is represented before any need gets a second slot.

    Args:
        rankings: One ranking per need, best first.
        k: How many results.
        provider: A tool's provider (a mapping or a function); without it there is no penalty.
        diversity: Rank positions lost per earlier result of the same provider.

    Returns:
        The merged results, in merge order.
    """
    if isinstance(provider, Mapping):
        lookup = provider.get
    else:
        lookup = provider
    taken: set[str] = set()
    by_provider: Counter[str] = Counter()
    cursors = [0] * len(rankings)
    out: list[CoverageHit] = []
    while len(out) < k:
        progressed = False
        for need, ranking in enumerate(rankings):
            if len(out) >= k:
                break
            while cursors[need] < len(ranking) and ranking[cursors[need]][0] in taken:
                cursors[need] += 1
            window = [
                (position, item)
                for position, item in enumerate(ranking[cursors[need] :], start=cursors[need])
                if item[0] not in taken
            ][:_WINDOW]
            if not window:
                continue

            def cost(entry: tuple[int, tuple[str, float]]) -> float:
                position, (tool, _) = entry
                owner = lookup(tool) if lookup is not None else None
                penalty = diversity * by_provider[owner] if owner else 0.0
                return position + penalty

            _, (tool, score) = min(window, key=cost)
            taken.add(tool)
            owner = lookup(tool) if lookup is not None else None
            if owner:
                by_provider[owner] += 1
            out.append(CoverageHit(tool, float(score), need))
            progressed = True
        if not progressed:
            break
    return out

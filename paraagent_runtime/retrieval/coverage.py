"""Merging per-need rankings with coverage: every need gets a slot before any need gets two.

A multi-intent request is split into needs (:mod:`.decompose`); each need is searched on its own,
its lists fused with the whole request's (context: "the order history *for my Rewards
account*"), and the per-need rankings are merged in rounds. Within a round each need takes its
best tool not taken yet, placed best score first; an optional diversity penalty (maximal marginal
relevance across providers) makes a need prefer a tool from a provider the results lack.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

from .fusion import FusionMethod, Ranking, normalize, weighted_sum

__all__ = ["CoverageHit", "cover", "need_rankings"]

_WINDOW = 10
"""How deep into a need's ranking the diversity penalty may reach for a better-spread tool."""


@dataclass(frozen=True)
class CoverageHit:
    """One merged result: the tool, its score in its need's ranking, and that need's index."""

    tool: str
    score: float
    need: int


def need_rankings(
    needs: Sequence[tuple[Ranking, Ranking]],
    whole: tuple[Ranking, Ranking],
    *,
    method: FusionMethod,
    dense_weight: float,
    rrf_k: float,
    context: float,
) -> list[list[tuple[str, float]]]:
    """The fused ranking of every need, each with a ``context`` share from the whole query's lists.

    The whole query's lists are normalized once and shared by every need's fusion.

    Args:
        needs: Each need's ``(dense, bm25)`` rankings.
        whole: The whole query's ``(dense, bm25)`` rankings.
        method: How the four lists of a need are fused.
        dense_weight: Weight of the dense lists; BM25 gets the rest.
        rrf_k: The RRF constant.
        context: Share of the fused score that comes from the whole query (0: the need alone).
    """
    own, shared = 1.0 - context, context
    weights = (dense_weight, 1.0 - dense_weight)
    common = [
        (normalize(ranking, method, rrf_k=rrf_k), shared * weight)
        for ranking, weight in zip(whole, weights, strict=True)
    ]
    return [
        weighted_sum(
            [
                *(
                    (normalize(ranking, method, rrf_k=rrf_k), own * weight)
                    for ranking, weight in zip(need, weights, strict=True)
                ),
                *common,
            ]
        )
        for need in needs
    ]


def cover(
    rankings: Sequence[Sequence[tuple[str, float]]],
    k: int,
    *,
    provider: Callable[[str], str | None] | Mapping[str, str] | None = None,
    diversity: float = 0.0,
) -> list[CoverageHit]:
    """Merge per-need rankings in rounds into ``k`` results (fewer when the lists run out).

    In each round every need contributes its best tool not taken yet (among its first ten, the
    one with the best ``position + diversity * (results so far from its provider)``), and the
    round's tools are placed best score first, so a need that matches nothing well (a request's
    preamble) takes the last slot of the round rather than the first. Two needs picking the same
    tool share it for that round. Every need is represented before any need gets a second slot.

    Args:
        rankings: One ranking per need, best first, with scores comparable across needs.
        k: How many results.
        provider: A tool's provider (a mapping or a function); without it there is no penalty.
        diversity: Rank positions lost per earlier result of the same provider.

    Returns:
        The merged results, in order.
    """
    lookup = provider.get if isinstance(provider, Mapping) else provider
    taken: set[str] = set()
    by_provider: Counter[str] = Counter()

    def owner(tool: str) -> str | None:
        return lookup(tool) if lookup is not None else None

    def best(ranking: Sequence[tuple[str, float]]) -> tuple[str, float] | None:
        window = list(islice((item for item in ranking if item[0] not in taken), _WINDOW))
        if not window:
            return None

        def cost(position: int) -> float:
            name = owner(window[position][0])
            return position + (diversity * by_provider[name] if name else 0.0)

        return window[min(range(len(window)), key=cost)]

    out: list[CoverageHit] = []
    while len(out) < k:
        picks = [(pick, need) for need, r in enumerate(rankings) if (pick := best(r)) is not None]
        if not picks:
            break
        picks.sort(key=lambda entry: -entry[0][1])
        for pick, need in picks:
            if len(out) >= k:
                break
            if pick[0] in taken:
                # Another need's pick this round: that tool answers this need too.
                continue
            tool, score = pick
            taken.add(tool)
            name = owner(tool)
            if name:
                by_provider[name] += 1
            out.append(CoverageHit(tool, float(score), need))
    return out

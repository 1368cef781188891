"""Fusion functions and retrieval metrics, checked against hand-computed values."""

from __future__ import annotations

import math

import pytest

from paraagent_runtime.retrieval import (
    FusionMethod,
    completeness_at_k,
    fuse,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank_fusion,
    score_fusion,
)


def test_rrf_rewards_agreement() -> None:
    fused = dict(reciprocal_rank_fusion([[("a", 9), ("b", 8)], [("b", 1), ("c", 0.5)]], k=1))
    assert fused["b"] == pytest.approx(1 / 3 + 1 / 2)
    assert fused["a"] == pytest.approx(1 / 2)
    assert fused["c"] == pytest.approx(1 / 3)
    assert [item for item, _ in reciprocal_rank_fusion([[("a", 1)], []])] == ["a"]


def test_score_fusion_min_max_normalizes_each_list() -> None:
    fused = score_fusion(
        [[("a", 10.0), ("b", 5.0)], [("b", 0.9), ("a", 0.1)]], weights=[0.25, 0.75]
    )
    assert fused[0][0] == "b"
    assert dict(fused)["a"] == pytest.approx(0.25)
    assert dict(fused)["b"] == pytest.approx(0.75)


def test_fuse_weight_extremes_follow_one_list() -> None:
    dense, lexical = [("d1", 0.9), ("d2", 0.8)], [("l1", 7.0), ("l2", 3.0)]
    for method in FusionMethod:
        assert fuse(dense, lexical, method=method, dense_weight=1.0)[0][0] == "d1"
        assert fuse(dense, lexical, method=method, dense_weight=0.0)[0][0] == "l1"
    assert fuse([], [], method=FusionMethod.SCORE) == []


def test_metrics_by_hand() -> None:
    ranked = ["x", "g1", "y", "g2"]
    gold = ["g1", "g2"]
    assert recall_at_k(ranked, gold, 1) == 0.0
    assert recall_at_k(ranked, gold, 3) == 0.5
    assert completeness_at_k(ranked, gold, 3) == 0.0
    assert completeness_at_k(ranked, gold, 4) == 1.0
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at_k(ranked, gold, 4) == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / ideal
    )
    assert ndcg_at_k(["g1"], gold, 1) == 1.0
    assert ndcg_at_k(["g1", "g1"], ["g1"], 2) == 1.0


@pytest.mark.parametrize("metric", [recall_at_k, ndcg_at_k, completeness_at_k])
def test_metrics_reject_bad_input(metric) -> None:
    with pytest.raises(ValueError, match="k must be"):
        metric(["a"], ["a"], 0)
    with pytest.raises(ValueError, match="gold"):
        metric(["a"], [], 1)

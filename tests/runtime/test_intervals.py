from __future__ import annotations

import math

import pytest

from paraagent_runtime.intervals import bootstrap_mean, paired_bootstrap_difference, wilson


def test_wilson_matches_the_textbook_value() -> None:
    interval = wilson(8, 10)
    assert interval.estimate == pytest.approx(0.8)
    assert interval.low == pytest.approx(0.4902, abs=1e-4)
    assert interval.high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_at_the_edges_stays_in_unit_range() -> None:
    assert wilson(0, 60).low == 0.0
    assert 0.0 < wilson(0, 60).high < 0.07
    assert wilson(60, 60).high == 1.0
    assert wilson(0, 0).n == 0
    with pytest.raises(ValueError, match="successes"):
        wilson(5, 4)


def test_bootstrap_mean_is_seeded_and_covers_the_mean() -> None:
    values = [float(i % 7) for i in range(100)]
    first = bootstrap_mean(values, seed=3)
    assert first == bootstrap_mean(values, seed=3)
    assert first.low < first.estimate < first.high
    assert first.estimate == pytest.approx(sum(values) / len(values))
    assert math.isnan(bootstrap_mean([]).estimate)


def test_paired_difference_removes_item_difficulty() -> None:
    difficulty = [float(i) for i in range(60)]
    better = [d + 1.0 for d in difficulty]
    difference = paired_bootstrap_difference(better, difficulty)
    assert difference.low == difference.high == pytest.approx(1.0)
    with pytest.raises(ValueError, match="length"):
        paired_bootstrap_difference([1.0], [1.0, 2.0])
    assert str(difference).startswith("1.000 [1.000, 1.000]")
    assert difference.percent().startswith("100.0")

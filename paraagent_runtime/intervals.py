"""Confidence intervals for reported numbers: Wilson for success rates, bootstrap for means.

Every table the project prints about a policy, a retriever or an oracle rests on these, so
intervals are computed one way everywhere. Bootstraps are seeded, so a table regenerates exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_EVAL_TASKS",
    "Interval",
    "bootstrap_mean",
    "paired_bootstrap_difference",
    "wilson",
]

DEFAULT_EVAL_TASKS = 60
"""Tasks per split an evaluation runs unless told otherwise (``eval toolenv``, ``train eval``).

At 60 a Wilson interval spans about ±12 points at a 50% success rate; fewer tasks leave most
differences between modes or policies unresolved.
"""

_Z95 = 1.959963984540054
DEFAULT_RESAMPLES = 2000
"""Bootstrap resamples: enough for a stable 95% interval over tens to thousands of items."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with its 95% interval and the number of items it rests on."""

    estimate: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}] (n={self.n})"

    def percent(self) -> str:
        """The interval in percent, for tables: ``66.7 [54.1, 77.3]``."""
        return f"{100 * self.estimate:.1f} [{100 * self.low:.1f}, {100 * self.high:.1f}]"

    def as_dict(self) -> dict[str, float | int]:
        """The interval as JSON-ready fields."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n}


def wilson(successes: int, n: int, z: float = _Z95) -> Interval:
    """The Wilson score interval of a success rate (95% by default).

    Unlike the normal approximation it stays inside [0, 1] and is sensible at 0/n and n/n.

    Raises:
        ValueError: ``successes`` is outside ``[0, n]``.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    if n == 0:
        return Interval(0.0, 0.0, 1.0, 0)
    rate = successes / n
    denominator = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / denominator
    # At 0/n and n/n one bound is the estimate itself; rounding must not move it off 0 or 1.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(rate, low, high, n)


def _percentile(sorted_values: Sequence[float], fraction: float) -> float:
    position = fraction * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    weight = position - lower
    return sorted_values[lower] * (1 - weight) + sorted_values[upper] * weight


def bootstrap_mean(
    values: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> Interval:
    """The mean of ``values`` with a percentile-bootstrap 95% interval."""
    n = len(values)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = sum(values) / n
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return Interval(mean, _percentile(means, 0.025), _percentile(means, 0.975), n)


def paired_bootstrap_difference(
    first: Sequence[float],
    second: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """Mean of ``first[i] - second[i]`` with a paired bootstrap 95% interval.

    Use it to compare two systems on the same items (tasks, queries): the pairing removes the
    items' own difficulty from the interval.

    Raises:
        ValueError: The two sequences differ in length.
    """
    if len(first) != len(second):
        raise ValueError(f"paired samples differ in length: {len(first)} vs {len(second)}")
    return bootstrap_mean(
        [a - b for a, b in zip(first, second, strict=True)], resamples=resamples, seed=seed
    )

"""The bar panel the held-out comparisons share (an ablation's and pooled evaluations')."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["draw_bars"]


def draw_bars(
    axis: Any,
    bars: Mapping[str, Sequence[float]],
    *,
    title: str,
    errors: Sequence[float] | None = None,
    notes: Sequence[str] | None = None,
) -> None:
    """One bar per label at the mean of its values, each value a dot on it, on a 0–1 axis.

    Args:
        axis: The matplotlib axes to draw on.
        bars: Label → values (seeds' or evaluations' scores).
        title: The panel's title.
        errors: An error bar per label (``None``: none).
        notes: A short text at the top above each bar (a paired difference), ``""`` for none.
    """
    positions = range(len(bars))
    means = [sum(values) / len(values) for values in bars.values()]
    axis.bar(positions, means, yerr=errors, capsize=4, color="lightsteelblue")
    for position, values in zip(positions, bars.values(), strict=True):
        axis.scatter([position] * len(values), values, color="black", s=12, zorder=3)
    for position, note in zip(positions, notes or (), strict=False):
        if note:
            axis.text(position, 0.97, _wrap(note, 9), ha="center", va="top", fontsize=8)
    axis.set_xticks(list(positions), [_wrap(label, 12) for label in bars], fontsize=8)
    axis.set_ylim(0, 1)
    axis.set_title(title)
    axis.title.set_fontsize(9)


def _wrap(text: str, width: int) -> str:
    """``text`` broken into lines of about ``width`` characters (neighbouring bars' texts)."""
    return textwrap.fill(text, width, break_long_words=False)

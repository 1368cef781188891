"""RL plots: a run's curves, and the bar panel the held-out comparisons share.

The curves PNG: level rewards, success, zero-variance groups, KL, loss, NLL, gradient SNR.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from paraagent_runtime.errors import ConfigError

__all__ = ["draw_bars", "plot_curves"]

_PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("trajectory reward", ("reward/trajectory_mean",)),
    ("phase reward", ("reward/phase_explore_mean", "reward/phase_execute_mean")),
    (
        "step reward",
        ("reward/step_explore_mean", "reward/step_execute_mean", "reward/step_final_mean"),
    ),
    ("success / zero-variance groups", ("success", "zero_variance_groups")),
    ("KL to reference", ("kl",)),
    ("loss / mean advantage", ("loss", "advantage_mean")),
    ("sampled-token NLL (entropy at T = 1)", ("rollout_nll",)),
    ("gradient signal/noise across groups", ("grad_snr", "grad_group_cosine")),
)


def plot_curves(metrics_path: str | Path, png_path: str | Path) -> Path:
    """Draw the metrics JSONL written by the trainer into ``png_path``.

    Raises:
        ConfigError: the metrics file is missing or holds no step.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(metrics_path)
    if not path.is_file():
        raise ConfigError(f"metrics file {str(path)!r} does not exist")
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    if not rows:
        raise ConfigError(f"{path}: no step to plot")
    steps = [row["step"] for row in rows]
    figure, axes = plt.subplots(2, 4, figsize=(17, 7))
    for unused in axes.flat[len(_PANELS) :]:
        unused.set_visible(False)
    for axis, (title, keys) in zip(axes.flat, _PANELS, strict=False):
        for key in keys:
            axis.plot(
                steps,
                [row.get(key, float("nan")) for row in rows],
                marker=".",
                label=key.split("/")[-1],
            )
        if (
            key.endswith("_mean")
            and (std := key.replace("_mean", "_std")) in rows[0]
            and len(keys) == 1
        ):
            means = [row[key] for row in rows]
            spread = [row[std] for row in rows]
            axis.fill_between(
                steps,
                [m - s for m, s in zip(means, spread, strict=True)],
                [m + s for m, s in zip(means, spread, strict=True)],
                alpha=0.2,
            )
        axis.set_title(title)
        axis.set_xlabel("step")
        axis.legend(fontsize=7)
    figure.tight_layout()
    target = Path(png_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, dpi=100)
    plt.close(figure)
    return target


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

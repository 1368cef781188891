"""A run's curves PNG: level rewards, success, zero-variance groups, KL, loss, NLL, gradient SNR."""

from __future__ import annotations

import json
from pathlib import Path

from paraagent_runtime import ConfigError
from paraagent_runtime.plotting import pyplot, save_figure

__all__ = ["plot_curves"]

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
        MissingExtraError: matplotlib is not installed.
    """
    plt = pyplot()
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
    return save_figure(figure, png_path)

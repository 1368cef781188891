"""The shared bar panel: long labels and notes wrap, so neighbouring bars' texts stay apart."""

from __future__ import annotations

from paraagent_runtime.plotting import pyplot
from training.experiments.plot import draw_bars


def test_draw_bars_wraps_long_labels_and_notes() -> None:
    plt = pyplot()
    figure, axis = plt.subplots()
    try:
        draw_bars(
            axis,
            {"start": [0.1, 0.2], "multi-level, both seeds": [0.3, 0.1]},
            title="held-out success",
            notes=["", "Δ +0.031 ± 0.069"],
        )
        labels = [tick.get_text() for tick in axis.get_xticklabels()]
        notes = [text.get_text() for text in axis.texts]
        heights = [round(bar.get_height(), 3) for bar in axis.patches]
    finally:
        plt.close(figure)
    assert labels == ["start", "multi-level,\nboth seeds"]
    assert notes == ["Δ +0.031\n± 0.069"]
    assert heights == [0.15, 0.2]

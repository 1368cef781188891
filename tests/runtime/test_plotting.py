"""The one plotting helper: matplotlib on Agg, or a one-line error naming the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from paraagent_runtime.errors import MissingExtraError
from paraagent_runtime.plotting import pyplot, save_figure


def test_pyplot_draws_to_files_and_save_figure_creates_the_folder(tmp_path: Path) -> None:
    plt = pyplot()
    figure, axis = plt.subplots()
    axis.plot([0, 1], [1, 0])
    path = save_figure(figure, tmp_path / "nested" / "line.png")
    assert plt.get_backend().lower() == "agg"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.get_fignums()


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'paraagent\[train\]'") as error:
        pyplot()
    assert error.value.extra == "train"
    assert "\n" not in str(error.value)

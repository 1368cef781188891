"""docs/ARCHITECTURE.md stays the current map: one line for every module, none for a module gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGES = ("paraagent_runtime", "mcp_servers", "tui", "training", "benchmarks")
LINE = re.compile(r"^- `((?:" + "|".join(PACKAGES) + r")/[\w/]+\.py)`: (.+)$", re.MULTILINE)


def _mapped() -> dict[str, str]:
    return dict(LINE.findall(MAP.read_text(encoding="utf-8")))


def _modules() -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
    }


def test_every_module_has_its_line() -> None:
    assert sorted(_modules() - set(_mapped())) == []


def test_the_map_names_no_module_that_is_gone() -> None:
    assert sorted(set(_mapped()) - _modules()) == []


def test_each_line_says_what_the_module_is_for() -> None:
    terse = [module for module, text in _mapped().items() if len(text.split()) < 2]
    assert terse == []

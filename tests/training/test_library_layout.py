"""training/ is a library with a lab notebook beside it: the library never imports experiments."""

from __future__ import annotations

import ast
from pathlib import Path

TRAINING = Path(__file__).resolve().parents[2] / "training"
CLI_MODULES = {TRAINING / "cli.py", TRAINING / "rl" / "cli.py"}
"""Composition roots: they may load an experiment, inside the command that runs it."""


def _experiment_imports(path: Path) -> list[tuple[int, bool]]:
    """(line, at module level) of every import of ``training.experiments`` in ``path``."""
    found = []

    def visit(node: ast.AST, top_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and not child.level:
                names = [child.module or ""]
            if any(name.startswith("training.experiments") for name in names):
                found.append((child.lineno, top_level))
            visit(child, top_level and not isinstance(child, ast.FunctionDef))

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


def test_the_library_never_imports_experiments() -> None:
    library = [
        path
        for path in TRAINING.rglob("*.py")
        if "experiments" not in path.relative_to(TRAINING).parts
    ]
    assert library
    offending = {
        f"{path.relative_to(TRAINING)}:{line}": top_level
        for path in library
        for line, top_level in _experiment_imports(path)
        if path not in CLI_MODULES or top_level
    }
    assert offending == {}


def test_no_results_ship_inside_training() -> None:
    data = {
        path.relative_to(TRAINING).as_posix()
        for path in TRAINING.rglob("*")
        if path.is_file() and path.suffix in {".json", ".jsonl", ".png", ".md"}
    }
    assert data == {"README.md"}

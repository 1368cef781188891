"""The dependency rule of docs/ARCHITECTURE.md, checked on every import statement in the tree.

tui, training, benchmarks → paraagent_runtime ← mcp_servers; only the composition root
(``paraagent_runtime/cli``) wires the packages together, and it does so lazily (inside functions),
so ``paraagent --help`` never imports what a command does not need.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("paraagent_runtime", "mcp_servers", "training", "tui", "benchmarks")
COMPOSITION_ROOT = "paraagent_runtime.cli"
# The one module of the composition root that command modules elsewhere may import.
SHARED_OPTIONS = "paraagent_runtime.cli.options"

# Which of our packages each package may import (besides itself).
ALLOWED: dict[str, frozenset[str]] = {
    "paraagent_runtime": frozenset(),
    "mcp_servers": frozenset({"paraagent_runtime"}),
    "tui": frozenset({"paraagent_runtime"}),
    "training": frozenset({"paraagent_runtime", "mcp_servers"}),
    "benchmarks": frozenset({"paraagent_runtime", "mcp_servers", "training"}),
}


@dataclass(frozen=True)
class Import:
    """One import statement: the importing module, the imported one and where it sits."""

    module: str
    target: str
    line: int
    top_level: bool


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports_of(path: Path) -> list[Import]:
    module = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Import] = []

    def visit(node: ast.AST, top_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = top_level and not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            if isinstance(child, ast.Import):
                found.extend(
                    Import(module, alias.name, child.lineno, top_level) for alias in child.names
                )
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(module, path.name == "__init__.py", child)
                # ``from package import module`` imports that module (``options``, ``cli``);
                # any other name imported is the package's (or module's) own.
                submodules = [
                    f"{target}.{alias.name}"
                    for alias in child.names
                    if _is_module(f"{target}.{alias.name}")
                ]
                if len(submodules) < len(child.names):
                    submodules.append(target)
                found.extend(Import(module, name, child.lineno, top_level) for name in submodules)
            visit(child, nested)

    visit(tree, True)
    return found


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _all_imports() -> list[Import]:
    return [
        item
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for item in _imports_of(path)
    ]


IMPORTS = _all_imports()


def _top(name: str) -> str:
    return name.split(".")[0]


def _is_under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def packages_breaking_the_rule(imports: list[Import]) -> list[str]:
    """Imports of one of our packages by another that the rule does not allow."""
    return [
        f"{item.module}:{item.line} imports {item.target}"
        for item in imports
        if not _is_under(item.module, COMPOSITION_ROOT)
        and _top(item.target) in PACKAGES
        and _top(item.target) != _top(item.module)
        and _top(item.target) not in ALLOWED[_top(item.module)]
    ]


def eager_compositions(imports: list[Import]) -> list[str]:
    """Module-level imports of other packages by the composition root."""
    return [
        f"{item.module}:{item.line} imports {item.target} at module level"
        for item in imports
        if _is_under(item.module, COMPOSITION_ROOT)
        and item.top_level
        and _top(item.target) in PACKAGES
        and _top(item.target) != "paraagent_runtime"
    ]


def _is_cli(name: str) -> bool:
    return _is_under(name, COMPOSITION_ROOT) or name.split(".")[-1] in {
        "cli",
        "cli_options",
        "__main__",
    }


def reaching_into_the_cli(imports: list[Import]) -> list[str]:
    """Imports of command modules by library code or by another package's commands.

    Library helpers belong in library modules; only the composition root and a package's own
    commands import a package's command modules. The shared flags are the exception: every
    command module may import :data:`SHARED_OPTIONS`, their one home (library modules may not).
    """
    return [
        f"{item.module}:{item.line} imports {item.target}"
        for item in imports
        if _is_cli(item.target)
        and not _is_under(item.module, COMPOSITION_ROOT)
        and not (_is_cli(item.module) and _top(item.module) == _top(item.target))
        and not (_is_cli(item.module) and item.target == SHARED_OPTIONS)
    ]


def algorithms_importing_the_simulator(imports: list[Import]) -> list[str]:
    """Imports of ToolEnv by the pure training algorithms."""
    return [
        f"{item.module}:{item.line} imports {item.target}"
        for item in imports
        if _is_under(item.module, "training.algo") and _top(item.target) == "mcp_servers"
    ]


def library_importing_experiments(imports: list[Import]) -> list[str]:
    """Imports of experiment analysis by the training library (its CLI may, lazily)."""
    return [
        f"{item.module}:{item.line} imports {item.target}"
        for item in imports
        if _top(item.module) == "training"
        and not _is_under(item.module, "training.experiments")
        and not (item.module.endswith(".cli") and not item.top_level)
        and _is_under(item.target, "training.experiments")
    ]


RULES = (
    packages_breaking_the_rule,
    eager_compositions,
    reaching_into_the_cli,
    algorithms_importing_the_simulator,
    library_importing_experiments,
)


def test_the_scan_sees_the_tree() -> None:
    assert len({item.module for item in IMPORTS}) > 100
    lazy = [item for item in IMPORTS if not item.top_level]
    assert lazy and any(_is_under(item.target, "paraagent_runtime") for item in IMPORTS)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_the_tree_follows_the_dependency_rule(rule) -> None:
    assert rule(IMPORTS) == []


@pytest.mark.parametrize(
    ("rule", "offender"),
    [
        (packages_breaking_the_rule, Import("paraagent_runtime.agent", "tui.app", 3, False)),
        (packages_breaking_the_rule, Import("mcp_servers.toolenv.x", "training.algo", 3, True)),
        (packages_breaking_the_rule, Import("tui.app", "mcp_servers.toolenv", 3, False)),
        (eager_compositions, Import("paraagent_runtime.cli.app", "tui.cli", 3, True)),
        (reaching_into_the_cli, Import("tui.app", "paraagent_runtime.cli.options", 3, True)),
        (reaching_into_the_cli, Import("training.cli", "paraagent_runtime.cli.app", 3, True)),
        (reaching_into_the_cli, Import("training.cli", "paraagent_runtime.cli", 3, True)),
        (reaching_into_the_cli, Import("tui.cli", "paraagent_runtime.mcp.cli", 3, False)),
        (reaching_into_the_cli, Import("tui.app", "tui.cli", 3, True)),
        (algorithms_importing_the_simulator, Import("training.algo.r", "mcp_servers.x", 3, True)),
        (library_importing_experiments, Import("training.rl.x", "training.experiments.a", 3, True)),
    ],
)
def test_each_rule_flags_its_offender(rule, offender: Import) -> None:
    flagged = rule([offender])
    assert len(flagged) == 1
    assert flagged[0].startswith(f"{offender.module}:3 imports {offender.target}")


@pytest.mark.parametrize(
    ("module", "flagged"),
    [
        ("tui.app", True),
        ("training.rl.config", True),
        ("training.cli", False),
        ("training.rl.cli", False),
        ("mcp_servers.toolenv.catalog.cli", False),
    ],
)
def test_only_command_modules_share_the_options(module: str, flagged: bool) -> None:
    found = reaching_into_the_cli([Import(module, SHARED_OPTIONS, 3, True)])
    assert bool(found) is flagged, found


def test_from_package_import_module_names_the_module() -> None:
    shared = [item for item in IMPORTS if item.target == SHARED_OPTIONS]
    assert {"training.cli", "paraagent_runtime.cli.app"} <= {item.module for item in shared}


def test_lazy_composition_is_allowed() -> None:
    lazy = Import("paraagent_runtime.cli.app", "tui.cli", 3, False)
    assert eager_compositions([lazy]) == []
    assert packages_breaking_the_rule([lazy]) == []


def test_function_bodies_count_as_lazy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    package = tmp_path / "paraagent_runtime" / "cli"
    package.mkdir(parents=True)
    module = package / "demo.py"
    module.write_text(
        "import tui\n\ndef command():\n    from training import cli\n", encoding="utf-8"
    )
    found = _imports_of(module)
    assert [(item.module, item.target, item.top_level) for item in found] == [
        ("paraagent_runtime.cli.demo", "tui", True),
        ("paraagent_runtime.cli.demo", "training", False),
    ]

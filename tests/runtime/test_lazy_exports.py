from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from paraagent_runtime import MissingExtraError
from paraagent_runtime.lazy_exports import lazy_exports

INIT = """
from paraagent_runtime.lazy_exports import lazy_exports
from paraagent_runtime import MissingExtraError

__all__ = ["Thing", "needs_extra"]
_WHERE = {"Thing": "things", "needs_extra": "heavy"}


def _missing(name, exc):
    return MissingExtraError(f"{name} needs {exc.name}", extra="demo")


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__, missing=_missing)
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    root = tmp_path / "lazydemo"
    root.mkdir()
    (root / "__init__.py").write_text(INIT, encoding="utf-8")
    (root / "things.py").write_text("class Thing:\n    pass\n", encoding="utf-8")
    (root / "heavy.py").write_text("import not_installed_anywhere\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lazydemo"
    for name in [name for name in sys.modules if name.split(".")[0] == "lazydemo"]:
        del sys.modules[name]


def test_a_name_loads_its_module_on_first_use_only(package: str) -> None:
    module = importlib.import_module(package)
    assert f"{package}.things" not in sys.modules
    thing = module.Thing
    assert f"{package}.things" in sys.modules
    assert thing.__module__ == f"{package}.things"
    assert vars(module)["Thing"] is thing


def test_dir_lists_the_public_names_before_they_load(package: str) -> None:
    module = importlib.import_module(package)
    assert {"Thing", "needs_extra"} <= set(dir(module))
    assert f"{package}.heavy" not in sys.modules


def test_an_unknown_name_is_an_attribute_error(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = module.nothing


def test_a_missing_dependency_becomes_the_package_error(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(MissingExtraError, match="needs_extra needs not_installed_anywhere") as info:
        _ = module.needs_extra
    assert info.value.extra == "demo"
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_without_a_hook_the_module_error_rises() -> None:
    getattr_, _ = lazy_exports("paraagent_runtime", {"ghost": "no_such_submodule"}, ["ghost"])
    with pytest.raises(ModuleNotFoundError):
        getattr_("ghost")

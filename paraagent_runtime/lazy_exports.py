"""Package names that load their module on first use: what keeps ``import`` and ``--help`` fast.

A package lists where each public name lives and hands the two module hooks to Python::

    __getattr__, __dir__ = lazy_exports(__name__, {"Agent": "agent", ...}, __all__)

``from package import Agent`` then imports ``package.agent`` only at that moment, and the value
is cached in the package, so the hook runs once per name.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    where: Mapping[str, str],
    public: Iterable[str],
    *,
    missing: Callable[[str, ModuleNotFoundError], Exception] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Build the module-level ``__getattr__`` and ``__dir__`` of a package with lazy names.

    Args:
        package: The package's ``__name__``.
        where: Public name → the submodule (relative to ``package``) that defines it.
        public: The package's ``__all__``, listed by ``dir()`` before anything loads.
        missing: Builds the exception raised when a submodule needs a module that is not
            installed (e.g. one naming the extra); by default the ``ModuleNotFoundError`` rises.

    Returns:
        The ``(__getattr__, __dir__)`` pair to assign in the package.
    """
    names = sorted(public)

    def getattr_(name: str) -> Any:
        submodule = where.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            loaded = importlib.import_module(f".{submodule}", package)
        except ModuleNotFoundError as exc:
            if missing is None:
                raise
            raise missing(name, exc) from exc
        value = getattr(loaded, name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return getattr_, dir_

"""Guarded imports of the ``retrieval`` extra (faiss, sentence-transformers, bm25s)."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import UserError

__all__ = ["EXTRA_HINT", "require"]

EXTRA_HINT = "pip install 'paraagent[retrieval]'"


def require(module: str) -> ModuleType:
    """Import ``module`` from the ``retrieval`` extra or raise a :class:`UserError` naming it.

    Args:
        module: The importable module name (``faiss``, ``sentence_transformers``, ``bm25s``).

    Returns:
        The imported module.

    Raises:
        UserError: The module is not installed; the message names the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise UserError(
            f"tool retrieval needs the optional module {module!r}: {EXTRA_HINT} "
            "(without it the toolspace falls back to keyword search)"
        ) from exc

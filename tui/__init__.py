"""``paraagent chat``: a Textual TUI that makes parallel acting visible and controllable.

The app loads on first use (``tui.ChatApp``), so ``import tui`` needs no textual. The
``paraagent chat`` command that wires it is :mod:`paraagent_runtime.cli.chat_command`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ChatApp", "PolicyFactory", "run_chat"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

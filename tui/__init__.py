"""``paraagent chat``: a Textual TUI that makes parallel acting visible and controllable."""

from __future__ import annotations

from .app import ChatApp, PolicyFactory, run_chat

__all__ = ["ChatApp", "PolicyFactory", "run_chat"]

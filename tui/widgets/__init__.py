"""The widgets of ``paraagent chat``."""

from __future__ import annotations

from .calls import CallCard, CallState
from .conversation import Conversation
from .dialogs import ApprovalScreen, ElicitationScreen
from .episode import EpisodeView, TurnView
from .sidebar import Sidebar, SourceRow, SourceStatus
from .timeline import Timeline

__all__ = [
    "ApprovalScreen",
    "CallCard",
    "CallState",
    "Conversation",
    "ElicitationScreen",
    "EpisodeView",
    "Sidebar",
    "SourceRow",
    "SourceStatus",
    "Timeline",
    "TurnView",
]

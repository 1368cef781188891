"""The widgets of ``paraagent chat``."""

from __future__ import annotations

from .calls import SPINNER, CallCard, CallState
from .conversation import Conversation, NewOutputMarker
from .dialogs import ApprovalScreen, ElicitationScreen
from .episode import EpisodeView, TurnView
from .prompt import Prompt, ScrollRequest
from .sidebar import Sidebar, SourceRow, SourceStatus
from .timeline import Timeline

__all__ = [
    "SPINNER",
    "ApprovalScreen",
    "CallCard",
    "CallState",
    "Conversation",
    "ElicitationScreen",
    "EpisodeView",
    "NewOutputMarker",
    "Prompt",
    "ScrollRequest",
    "Sidebar",
    "SourceRow",
    "SourceStatus",
    "Timeline",
    "TurnView",
]

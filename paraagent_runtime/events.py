"""Typed events the agent loop yields.

The TUI, the trajectory writer and the trainer consume them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from .actions import FormatError, Phase
from .tools import ToolCall, ToolResult
from .trajectory import Episode

__all__ = [
    "AgentEvent",
    "AnswerEvent",
    "CallFinished",
    "CallProgress",
    "CallStarted",
    "EpisodeFinished",
    "ErrorEvent",
    "PhaseEvent",
    "TextDelta",
    "TurnFinished",
    "TurnStarted",
]


class TurnStarted(BaseModel):
    """The policy is asked for turn ``turn`` (0-based)."""

    type: Literal["turn_started"] = "turn_started"
    turn: int


class TextDelta(BaseModel):
    """A piece of the turn's text as a streaming backend produces it."""

    type: Literal["text_delta"] = "text_delta"
    turn: int
    text: str


class PhaseEvent(BaseModel):
    """The turn's phase is known (declared or inferred), with its calls and format errors."""

    type: Literal["phase"] = "phase"
    turn: int
    phase: Phase | None
    inferred: bool = False
    calls: list[ToolCall] = Field(default_factory=list)
    format_errors: list[FormatError] = Field(default_factory=list)


class CallStarted(BaseModel):
    """One call of the turn was dispatched."""

    type: Literal["call_started"] = "call_started"
    turn: int
    call: ToolCall


class CallProgress(BaseModel):
    """A running call's source reported progress (e.g. an MCP progress notification)."""

    type: Literal["call_progress"] = "call_progress"
    turn: int
    call_id: str
    name: str
    progress: float
    total: float | None = None
    message: str | None = None

    @property
    def fraction(self) -> float | None:
        """``progress / total`` within [0, 1] when the total is known and positive."""
        if not self.total or self.total <= 0:
            return None
        return min(max(self.progress / self.total, 0.0), 1.0)

    @property
    def label(self) -> str:
        """``42% half way``, ``3/10`` or the raw progress, plus the message when there is one."""
        if self.fraction is not None:
            label = f"{self.fraction:.0%}"
        elif self.total is not None:
            label = f"{self.progress:g}/{self.total:g}"
        else:
            label = f"{self.progress:g}"
        return f"{label} {self.message}" if self.message else label


class CallFinished(BaseModel):
    """One call of the turn finished (with content or a typed error)."""

    type: Literal["call_finished"] = "call_finished"
    turn: int
    result: ToolResult


class TurnFinished(BaseModel):
    """All calls of the turn finished; ``latency_s`` is the turn's wall time for tools."""

    type: Literal["turn_finished"] = "turn_finished"
    turn: int
    phase: Phase | None
    n_calls: int
    model_latency_s: float
    tools_latency_s: float


class AnswerEvent(BaseModel):
    """The agent answered; the episode ends."""

    type: Literal["answer"] = "answer"
    turn: int
    answer: str


class ErrorEvent(BaseModel):
    """Something went wrong; ``fatal`` errors end the episode (the trajectory is still written)."""

    type: Literal["error"] = "error"
    turn: int
    message: str
    fatal: bool = False


class EpisodeFinished(BaseModel):
    """The episode is over; ``episode.status`` says how it ended."""

    type: Literal["episode_finished"] = "episode_finished"
    episode: Episode


AgentEvent = Annotated[
    TurnStarted
    | TextDelta
    | PhaseEvent
    | CallStarted
    | CallProgress
    | CallFinished
    | TurnFinished
    | AnswerEvent
    | ErrorEvent
    | EpisodeFinished,
    Field(discriminator="type"),
]
"""Any event the agent yields; ``type`` tells which (a pydantic discriminated union)."""

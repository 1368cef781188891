"""One task of the conversation: the user's request, then each turn with its phase and calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Markdown, Static

from paraagent_runtime import (
    AgentEvent,
    AnswerEvent,
    CallFinished,
    CallProgress,
    CallStarted,
    Episode,
    EpisodeFinished,
    ErrorEvent,
    PhaseEvent,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnFinished,
    TurnRecord,
    TurnStarted,
)

from ..render import count_of, display_text, format_latency, format_problems, timings_shown
from .calls import CallCard

if TYPE_CHECKING:
    from paraagent_runtime.actions import FormatError

__all__ = ["EpisodeView", "TurnView"]


class TurnView(Vertical):
    """One assistant turn: phase badge, streamed text, and the panel of its parallel calls."""

    def __init__(self, index: int) -> None:
        super().__init__(classes="turn")
        self.index = index
        self.phase = "thinking"
        self.cards: dict[str, CallCard] = {}
        self._raw = ""
        self._shown = ""
        self._badge = Static("", classes="badge thinking")
        self._title = Static("", classes="turn-title")
        self._text = Markdown("", classes="turn-text")
        self._calls = Vertical(classes="calls")

    def compose(self) -> ComposeResult:
        """Badge and title, text, calls."""
        with Vertical(classes="turn-head"):
            yield self._badge
            yield self._title
        yield self._text
        yield self._calls

    def on_mount(self) -> None:
        """Start as a thinking turn with no text and no calls."""
        self._text.display = False
        self._calls.display = False
        self._set_badge("thinking", "…")
        self._title.update(Text(f"turn {self.index + 1}", style="dim"))

    def _set_badge(self, kind: str, label: str) -> None:
        self._badge.set_classes(f"badge {kind}")
        self._badge.update(f" {label} ")
        self.phase = kind

    async def append_text(self, delta: str) -> None:
        """Add streamed text; the Markdown is re-rendered only when what is shown changes."""
        self._raw += delta
        await self.set_text(self._raw)

    async def set_text(self, raw: str) -> None:
        """Show ``raw`` model text (tags removed)."""
        self._raw = raw
        shown = display_text(raw)
        if shown != self._shown:
            self._shown = shown
            self._text.display = bool(shown)
            await self._text.update(shown)

    async def set_phase(
        self,
        phase: str | None,
        *,
        inferred: bool,
        calls: list[ToolCall],
        destructive: frozenset[str],
        problems: Sequence[FormatError],
    ) -> None:
        """Show the phase badge, the turn's format errors and one queued card per call.

        A turn with neither calls nor a phase is marked as a format error when it has any (the
        model gets them back as its observation); otherwise it is left to its answer.
        """
        if calls or phase:
            label = (phase or "act").capitalize() + ("?" if inferred else "")
            self._set_badge(phase or "act", label)
        elif problems:
            self._set_badge("format-error", "Format error")
        self._title.update(Text(self._title_text(len(calls)), style="dim"))
        if problems:
            await self.mount(
                Static(format_problems(problems), classes="format-errors"), before=self._calls
            )
        for call in calls:
            card = CallCard(call, destructive=call.name in destructive)
            self.cards[call.id] = card
        if calls:
            self._calls.display = True
            await self._calls.mount_all(self.cards.values())

    def _title_text(self, n_calls: int, latency: str | None = None) -> str:
        parts = [f"turn {self.index + 1}"]
        if n_calls:
            parts.append(count_of(n_calls, "parallel call"))
        if latency is not None:
            parts.append(latency)
        return " · ".join(parts)

    def call_started(self, call: ToolCall) -> None:
        """Start the card's spinner."""
        card = self.cards.get(call.id)
        if card is not None:
            card.start()

    def call_progress(self, event: CallProgress) -> None:
        """Show a running call's latest progress report on its card."""
        card = self.cards.get(event.call_id)
        if card is not None:
            card.progress(event.label)

    async def call_finished(self, result: ToolResult, call: ToolCall | None = None) -> None:
        """Show a call's outcome (a card is created for calls the phase did not announce)."""
        card = self.cards.get(result.call_id)
        if card is None:
            card = CallCard(call or ToolCall(id=result.call_id, name=result.name))
            self.cards[result.call_id] = card
            self._calls.display = True
            await self._calls.mount(card)
        card.finish(result)

    def finish(self, n_calls: int, tools_latency_s: float) -> None:
        """The turn's calls are done: show the turn's tool latency (its slowest call)."""
        if n_calls:
            latency = format_latency(tools_latency_s, shown=timings_shown(self))
            self._title.update(Text(self._title_text(n_calls, latency), style="dim"))

    def mark_answer(self) -> None:
        """This turn answered the task."""
        self._set_badge("answer", "Answer")

    def cancel(self) -> None:
        """The turn was cancelled: queued and running calls show it."""
        for card in self.cards.values():
            card.cancel()
        if self.phase == "thinking":
            self._set_badge("cancelled", "Cancelled")


class EpisodeView(Vertical):
    """A task and its turns, rendered live from the agent's events.

    Post :class:`EpisodeView.AgentUpdate` messages to it in event order; they bubble on to the
    app (the timeline and notifications listen there).

    Args:
        task: what the user asked.
        destructive: model-facing names of destructive tools (their cards are marked).
    """

    class AgentUpdate(Message):
        """One agent event for this episode."""

        def __init__(self, event: AgentEvent) -> None:
            super().__init__()
            self.event = event

    class Cancelled(Message):
        """The user cancelled the running episode."""

    def __init__(self, task: str, *, destructive: frozenset[str] = frozenset()) -> None:
        super().__init__(classes="episode")
        self.request = task
        self.destructive = destructive
        self.turns: dict[int, TurnView] = {}
        self.status = "running"

    def compose(self) -> ComposeResult:
        """The user's request."""
        yield Static(Text.assemble(("› ", "bold"), self.request), classes="user-message")

    async def _turn(self, index: int) -> TurnView:
        turn = self.turns.get(index)
        if turn is None:
            turn = self.turns[index] = TurnView(index)
            await self.mount(turn)
        return turn

    async def on_episode_view_agent_update(self, message: AgentUpdate) -> None:
        """Render one event (the message keeps bubbling to the app)."""
        event = message.event
        if isinstance(event, TurnStarted):
            await self._turn(event.turn)
        elif isinstance(event, TextDelta):
            await (await self._turn(event.turn)).append_text(event.text)
        elif isinstance(event, PhaseEvent):
            await (await self._turn(event.turn)).set_phase(
                event.phase,
                inferred=event.inferred,
                calls=event.calls,
                destructive=self.destructive,
                problems=event.format_errors,
            )
        elif isinstance(event, CallStarted):
            (await self._turn(event.turn)).call_started(event.call)
        elif isinstance(event, CallProgress):
            (await self._turn(event.turn)).call_progress(event)
        elif isinstance(event, CallFinished):
            await (await self._turn(event.turn)).call_finished(event.result)
        elif isinstance(event, TurnFinished):
            (await self._turn(event.turn)).finish(event.n_calls, event.tools_latency_s)
        elif isinstance(event, AnswerEvent):
            (await self._turn(event.turn)).mark_answer()
        elif isinstance(event, ErrorEvent):
            await self.mount(
                Static(Text(f"error: {event.message}", style="bold red"), classes="episode-error")
            )
        elif isinstance(event, EpisodeFinished):
            self.finish(event.episode)

    def on_episode_view_cancelled(self, message: Cancelled) -> None:
        """Mark the in-flight turn and its calls as cancelled."""
        for turn in self.turns.values():
            turn.cancel()
        self.status = "cancelled"
        self.mount(Static(Text("cancelled", style="bold yellow"), classes="episode-status"))

    def finish(self, episode: Episode) -> None:
        """Show how the episode ended."""
        self.status = episode.status
        if episode.status != "answered":
            self.mount(
                Static(Text(f"ended: {episode.status}", style="yellow"), classes="episode-status")
            )

    async def replay(self, episode: Episode) -> None:
        """Render a finished episode from its record (resumed conversations)."""
        for record in episode.turns:
            await self._replay_turn(record)
        if episode.status == "cancelled":
            self.status = "cancelled"
            await self.mount(
                Static(Text("cancelled", style="bold yellow"), classes="episode-status")
            )
        else:
            self.finish(episode)

    async def _replay_turn(self, record: TurnRecord) -> None:
        turn = await self._turn(record.index)
        await turn.set_text(record.text)
        await turn.set_phase(
            record.phase,
            inferred=record.phase_inferred,
            calls=record.calls,
            destructive=self.destructive,
            problems=record.format_errors,
        )
        calls = {call.id: call for call in record.calls}
        for result in record.results:
            await turn.call_finished(result, calls.get(result.call_id))
        for card in turn.cards.values():
            card.cancel()
        turn.finish(len(record.calls), record.tools_latency_s)
        if record.answer is not None:
            turn.mark_answer()

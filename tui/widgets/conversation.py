"""The scrolling conversation: episodes and notes, following the newest output.

The conversation follows its end while the user is there: whatever grows (a new episode, a
streamed token, a call's result) stays in view. Once the user scrolls up it stays put, and new
output raises a "new output ↓" marker instead; clicking it, or scrolling back to the end, follows
again.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widgets import Markdown, Static

from .episode import EpisodeView

__all__ = ["Conversation", "NewOutputMarker"]

_WELCOME = """\
**paraagent chat** — ask for something; the agent explores the tool catalog and calls tools in
parallel. `/help` lists commands, `Esc` cancels a running turn, `Ctrl+P` opens the palette."""


class NewOutputMarker(Static):
    """The "new output ↓" line shown while the user reads above newer output; a click jumps down."""

    def __init__(self) -> None:
        super().__init__(
            Text("new output ↓  (End or click to follow)", style="bold"), id="new-output"
        )

    def on_click(self, event: events.Click) -> None:
        """Jump to the newest output."""
        event.stop()
        conversation = self.parent
        if isinstance(conversation, Conversation):
            conversation.follow()


class Conversation(VerticalScroll):
    """The episodes of the conversation, newest at the bottom.

    Attributes:
        following: the view sticks to the newest output (false once the user scrolled up).
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.following = True
        self.marker = NewOutputMarker()

    def on_mount(self) -> None:
        """Greet the user; the marker waits, hidden, docked at the bottom."""
        self.marker.display = False
        self.mount(self.marker)
        self.mount(Markdown(_WELCOME, classes="note welcome"))

    @property
    def has_new_output(self) -> bool:
        """True while the "new output ↓" marker is shown."""
        return bool(self.marker.display)

    def follow(self) -> None:
        """Jump to the newest output and follow it again."""
        self.following = True
        self.marker.display = False
        self.scroll_end(animate=False, immediate=True)

    def _at_end(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - 1

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolling up stops following; reaching the end (by any means) follows again."""
        super().watch_scroll_y(old_value, new_value)
        if self._at_end():
            self.following = True
            self.marker.display = False
        elif new_value < old_value:
            self.following = False

    def watch_virtual_size(self, old_size: Size, new_size: Size) -> None:
        """New output: keep it in view when following, else raise the marker."""
        if new_size.height <= old_size.height:
            return
        if self.following:
            self.scroll_end(animate=False)
        else:
            self.marker.display = True

    async def add_episode(self, view: EpisodeView) -> EpisodeView:
        """Append an episode view; a new task is always followed."""
        self.following = True
        await self.mount(view)
        self.follow()
        return view

    async def add_note(self, markdown: str) -> None:
        """Append a note (slash command output) and show it."""
        await self.mount(Markdown(markdown, classes="note info"))
        self.follow()

    async def add_error(self, message: str) -> None:
        """Append an error, as plain text (``<model>`` in a message is no HTML tag)."""
        text = Text.assemble(("error: ", "bold red"), message)
        await self.mount(Static(text, classes="note error"))
        self.follow()

    async def clear(self) -> None:
        """Remove everything but the welcome note."""
        await self.query("EpisodeView, .note").exclude(".welcome").remove()
        self.follow()

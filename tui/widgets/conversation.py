"""The scrolling conversation: episodes and notes from slash commands."""

from __future__ import annotations

from typing import Literal

from textual.containers import VerticalScroll
from textual.widgets import Markdown

from .episode import EpisodeView

__all__ = ["Conversation"]

_WELCOME = """\
**paraagent chat** — ask for something; the agent explores the tool catalog and calls tools in
parallel. `/help` lists commands, `Esc` cancels a running turn, `Ctrl+P` opens the palette."""


class Conversation(VerticalScroll):
    """The episodes of the conversation, newest at the bottom."""

    def on_mount(self) -> None:
        """Greet the user."""
        self.mount(Markdown(_WELCOME, classes="note welcome"))

    async def add_episode(self, view: EpisodeView) -> EpisodeView:
        """Append an episode view and scroll to it."""
        await self.mount(view)
        self.scroll_end(animate=False)
        return view

    async def add_note(self, markdown: str, *, kind: Literal["info", "error"] = "info") -> None:
        """Append a note (slash command output)."""
        await self.mount(Markdown(markdown, classes=f"note {kind}"))
        self.scroll_end(animate=False)

    async def clear(self) -> None:
        """Remove everything but the welcome note."""
        await self.query("EpisodeView, .note").exclude(".welcome").remove()

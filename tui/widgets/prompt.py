"""The prompt: an input line whose Home/End keys scroll the conversation when it is empty."""

from __future__ import annotations

from typing import Literal

from textual.message import Message
from textual.widgets import Input

__all__ = ["Prompt", "ScrollRequest"]

ScrollRequest = Literal["page_up", "page_down", "home", "end"]


class Prompt(Input):
    """The task input.

    Home/End scroll the conversation to its start/newest output when the line is empty, and move
    the cursor otherwise, as in any input line (the app binds PageUp/PageDown and
    Ctrl+Home/Ctrl+End, which an input leaves alone).
    """

    class Scroll(Message):
        """Asks the app to scroll the conversation."""

        def __init__(self, where: ScrollRequest) -> None:
            super().__init__()
            self.where = where

    def action_home(self, select: bool = False) -> None:
        """The cursor to the start, or the conversation to its top when the line is empty."""
        if not self.value and not select:
            self.post_message(self.Scroll("home"))
        else:
            super().action_home(select)

    def action_end(self, select: bool = False) -> None:
        """The cursor to the end, or the conversation to its newest output on an empty line."""
        if not self.value and not select:
            self.post_message(self.Scroll("end"))
        else:
            super().action_end(select)

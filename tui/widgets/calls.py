"""One call of a turn: tool, arguments, a spinner while it runs, status, latency, result."""

from __future__ import annotations

import json
from typing import Any, Literal

from rich.json import JSON
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from paraagent_runtime import META_TOOLS, ToolCall, ToolErrorKind, ToolResult

from ..render import format_latency, summarize_arguments, timings_shown

__all__ = ["SPINNER", "CallCard", "CallState"]

CallState = Literal["queued", "running", "ok", "error", "cancelled"]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ICONS: dict[CallState, tuple[str, str]] = {
    "queued": ("○", "dim"),
    "ok": ("✓", "green"),
    "error": ("✗", "red"),
    "cancelled": ("⊘", "yellow"),
}
_MAX_RESULT_CHARS = 4000


def _tool_cards(content: Any) -> str | None:
    """The found tools of a ``search_tools`` result as a short list, or None."""
    if not isinstance(content, list) or not all(isinstance(card, dict) for card in content):
        return None
    if not content:
        return "no tool matched"
    lines = []
    for card in content:
        params = ", ".join(card.get("parameters") or [])
        lines.append(f"• {card.get('name', '?')}({params}) — {card.get('description', '')}")
    return "\n".join(lines)


class CallCard(Vertical):
    """A tool call's live card; the result is collapsed until the user expands it.

    Args:
        call: the call as the model wrote it.
        destructive: mark the call as needing approval.
    """

    def __init__(self, call: ToolCall, *, destructive: bool = False) -> None:
        super().__init__(classes="call-card")
        self.call = call
        self.destructive = destructive
        self.state: CallState = "queued"
        self.result: ToolResult | None = None
        self._frame = 0
        self._progress: str | None = None
        self._header = Static(classes="call-header")
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        """The header line (results are mounted when the call finishes)."""
        yield self._header

    def on_mount(self) -> None:
        """Show the queued state."""
        self._render_header()

    def _render_header(self) -> None:
        if self.state == "running":
            icon, style = SPINNER[self._frame % len(SPINNER)], "cyan"
        else:
            icon, style = _ICONS[self.state]
        line = Text.assemble((icon, f"bold {style}"), " ", (self.call.name, "bold"))
        line.append(f"({summarize_arguments(self.call.arguments)})", style="dim")
        if self.destructive:
            line.append("  ⚠ destructive", style="yellow")
        status = self.state
        if self.result is not None:
            if self.result.error_kind is not None:
                status = self.result.error_kind.value
            line.append(
                f"  {format_latency(self.result.latency_s, shown=timings_shown(self))}", style="dim"
            )
            if self.result.cached:
                status += " (cached)"
        line.append(f"  {status}", style=style)
        if self.state == "running" and self._progress:
            line.append(f"  {self._progress}", style="cyan")
        self._header.update(line)

    def _tick(self) -> None:
        self._frame += 1
        self._render_header()

    def start(self) -> None:
        """The call was dispatched: show the spinner."""
        if self.state != "queued":
            return
        self.state = "running"
        self._timer = self.set_interval(0.1, self._tick)
        self._render_header()

    def progress(self, label: str) -> None:
        """The running call reported progress (``label`` as ``42% half way``)."""
        self._progress = label
        self._render_header()

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def finish(self, result: ToolResult) -> None:
        """Show the call's outcome: status, latency, then its result or error."""
        self._stop()
        self.result = result
        if result.error_kind is ToolErrorKind.CANCELLED:
            self.state = "cancelled"
        else:
            self.state = "ok" if result.ok else "error"
        self._render_header()
        if not result.ok:
            self.mount(Static(Text(result.error or "", style="red"), classes="call-error"))
            return
        cards = _tool_cards(result.content) if self.call.name in META_TOOLS else None
        if cards is not None:
            self.mount(Static(Text(cards), classes="tool-cards"))
        text = json.dumps(result.content, ensure_ascii=False, indent=2, default=str)
        if len(text) > _MAX_RESULT_CHARS:
            body: Any = Text(text[:_MAX_RESULT_CHARS] + "\n…", style="dim")
        else:
            body = JSON(text)
        title = "result" + (" (truncated)" if result.truncated else "")
        self.mount(Collapsible(Static(body, classes="call-result"), title=title, collapsed=True))

    def cancel(self) -> None:
        """The turn was cancelled while this call was queued or running."""
        if self.state not in ("queued", "running"):
            return
        self._stop()
        self.state = "cancelled"
        self._render_header()

"""The sidebar: tool sources with their tool counts and status, and the session settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..render import count_of

__all__ = ["SourceRow", "SourceStatus", "Sidebar"]

SourceStatus = Literal[
    "ready", "connected", "disconnected", "reconnecting", "closed", "failed", "loading"
]

_STYLES: dict[SourceStatus, tuple[str, str]] = {
    "ready": ("●", "green"),
    "connected": ("●", "green"),
    "disconnected": ("○", "yellow"),
    "reconnecting": ("↻", "yellow"),
    "closed": ("○", "dim"),
    "failed": ("✗", "red"),
    "loading": ("…", "dim"),
}


@dataclass(frozen=True)
class SourceRow:
    """One tool source as the sidebar shows it."""

    name: str
    tools: int
    status: SourceStatus
    error: str | None = None


class Sidebar(VerticalScroll):
    """Sources (name, tool count, status; failures with their reason) and the session settings."""

    def compose(self) -> ComposeResult:
        """Titles and the two text blocks."""
        yield Static("Sources", classes="sidebar-title")
        yield Static("", id="sources")
        yield Static("Session", classes="sidebar-title")
        yield Static("", id="session")

    def show_sources(self, rows: list[SourceRow]) -> None:
        """Replace the source list."""
        text = Text()
        for row in rows:
            icon, style = _STYLES[row.status]
            text.append(f"{icon} ", style=f"bold {style}")
            text.append(row.name, style="bold")
            text.append(f"  {count_of(row.tools, 'tool')}\n", style="dim")
            text.append(f"  {row.status}\n", style=style)
            if row.error:
                text.append(f"  {row.error}\n", style="red")
        total = sum(row.tools for row in rows)
        text.append(f"\n{count_of(len(rows), 'source')} · {count_of(total, 'tool')}", style="dim")
        self.query_one("#sources", Static).update(text)

    def show_session(self, *, model: str, mode: str, tasks: int = 0, calls: int = 0) -> None:
        """Show the model, the agent mode and the session's task and call counts."""
        text = Text.assemble(
            ("model ", "dim"),
            model,
            "\n",
            ("mode  ", "dim"),
            mode,
            "\n",
            ("ran   ", "dim"),
            f"{count_of(tasks, 'task')}, {count_of(calls, 'call')}",
        )
        self.query_one("#session", Static).update(text)

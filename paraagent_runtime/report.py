"""Human-readable views of episodes (the phase trace of one, a summary of many) and result tables.

:func:`readable_table` keeps a table of results legible in a narrow terminal: one row per result
when the rows fit, else the results side by side with the metrics down the left, a few per table,
so no header or value is cut to ``syst…``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from statistics import mean

from pydantic import BaseModel
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .intervals import wilson
from .trajectory import Episode

__all__ = ["RunSummary", "readable_table", "summarize", "summary_table", "trace_table"]

_UNBOUNDED = 100_000
"""A width no table reaches: measuring in it gives a table's natural width."""

_PHASE_STYLE = {"explore": "cyan", "execute": "magenta", None: "dim"}


def _calls_cell(episode: Episode, index: int) -> Text:
    turn = episode.turns[index]
    cell = Text()
    for call, result in zip(turn.calls, turn.results or [None] * len(turn.calls), strict=False):
        ok = result is not None and result.ok
        cell.append("✓ " if ok else "✗ ", style="green" if ok else "red")
        args = json.dumps(call.arguments, ensure_ascii=False)
        cell.append(f"{call.name}({args[:60]}{'…' if len(args) > 60 else ''})")
        if result is not None and not result.ok and result.error_kind is not None:
            cell.append(f"  [{result.error_kind.value}]", style="red")
        cell.append("\n")
    if not turn.calls and turn.answer is not None:
        cell.append(f"answer: {turn.answer[:200]}", style="bold")
    for error in turn.format_errors:
        cell.append(f"⚠ format error [{error.kind.value}]: {error.message[:200]}\n", style="yellow")
    cell.rstrip()
    return cell


def trace_table(episode: Episode) -> Table:
    """A table with one row per turn: phase, number of calls, the calls, model and tool latency."""
    table = Table(
        title=f"{episode.task_id or episode.id}: {episode.task[:90]}", title_justify="left"
    )
    table.add_column("turn", justify="right")
    table.add_column("phase")
    table.add_column("calls", justify="right")
    table.add_column("what happened", overflow="fold")
    table.add_column("model s", justify="right")
    table.add_column("tools s", justify="right")
    for index, turn in enumerate(episode.turns):
        # React mode declares no phase: its turns are plain calls.
        if turn.calls:
            phase = turn.phase or "call"
        else:
            phase = "answer" if turn.answer is not None else "—"
        table.add_row(
            str(index),
            Text(phase, style=_PHASE_STYLE.get(turn.phase if turn.calls else None, "")),
            str(len(turn.calls)),
            _calls_cell(episode, index),
            f"{turn.model_latency_s:.2f}",
            f"{turn.tools_latency_s:.3f}",
        )
    return table


class RunSummary(BaseModel):
    """Aggregates over a set of episodes (success only over episodes that were checked).

    ``unanswered`` counts the other episodes by how they ended (``max_turns``, ``repeating``…).
    """

    episodes: int
    answered: int
    unanswered: dict[str, int] = {}
    checked: int
    succeeded: int
    success_rate: float | None
    mean_turns: float
    mean_calls: float
    mean_calls_per_tool_turn: float
    mean_duration_s: float


def summarize(episodes: Sequence[Episode]) -> RunSummary:
    """Summarize episodes; ``metadata["success"]`` marks checked ones (ToolEnv tasks)."""
    checked = [e for e in episodes if "success" in e.metadata]
    tool_turns = [len(t.calls) for e in episodes for t in e.turns if t.calls]
    return RunSummary(
        episodes=len(episodes),
        answered=sum(e.status == "answered" for e in episodes),
        unanswered=dict(Counter(e.status for e in episodes if e.status != "answered")),
        checked=len(checked),
        succeeded=sum(bool(e.metadata["success"]) for e in checked),
        success_rate=(sum(bool(e.metadata["success"]) for e in checked) / len(checked))
        if checked
        else None,
        mean_turns=mean(len(e.turns) for e in episodes) if episodes else 0.0,
        mean_calls=mean(e.n_calls for e in episodes) if episodes else 0.0,
        mean_calls_per_tool_turn=mean(tool_turns) if tool_turns else 0.0,
        mean_duration_s=mean(e.duration_s for e in episodes) if episodes else 0.0,
    )


def summary_table(summary: RunSummary) -> Table:
    """The summary as a two-column table (success with its Wilson 95% interval)."""
    table = Table(title="summary", title_justify="left", show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    rate = "n/a"
    if summary.checked:
        interval = wilson(summary.succeeded, summary.checked)
        rate = (
            f"{summary.succeeded}/{summary.checked} = {interval.estimate:.0%} "
            f"[{interval.low:.0%}, {interval.high:.0%}]"
        )
    ended = ", ".join(f"{n} {status}" for status, n in summary.unanswered.items())
    rows = [
        ("episodes", str(summary.episodes)),
        ("answered", str(summary.answered)),
        *([("no answer", ended)] if ended else []),
        ("success (checked) [95% CI]", rate),
        ("turns / episode", f"{summary.mean_turns:.1f}"),
        ("calls / episode", f"{summary.mean_calls:.1f}"),
        ("calls / tool turn", f"{summary.mean_calls_per_tool_turn:.2f}"),
        ("seconds / episode", f"{summary.mean_duration_s:.1f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def readable_table(
    console: Console,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
) -> RenderableType:
    """A table of result rows that ``console`` can show without cutting a header or a value.

    Args:
        console: Where it will be printed (its width decides the layout).
        columns: The headers.
        rows: One row of cells per result.
        title: The table's title.

    Returns:
        The plain table when its natural width fits; else the results as columns (the headers
        down the left), as many per table as fit, the tables one after the other.
    """
    wide = Table(*columns, title=title, title_justify="left")
    for row in rows:
        wide.add_row(*row)
    unbounded = console.options.update_width(_UNBOUNDED)
    if Measurement.get(console, unbounded, wide).maximum <= console.width or not rows:
        return wide
    label = max(map(len, columns))
    # Each result column holds its widest cell plus the border and padding (3 characters).
    cell = max(len(value) for row in rows for value in row) + 3
    per_table = max(1, (console.width - label - 4) // cell)
    parts: list[RenderableType] = []
    for start in range(0, len(rows), per_table):
        chunk = rows[start : start + per_table]
        tall = Table(
            title=title if start == 0 else None,
            title_justify="left",
            show_header=False,
        )
        tall.add_column(style="bold", no_wrap=True)
        for _ in chunk:
            tall.add_column(overflow="fold")
        for index, header in enumerate(columns):
            tall.add_row(header, *(row[index] for row in chunk))
        parts.append(tall)
    return Group(*parts)

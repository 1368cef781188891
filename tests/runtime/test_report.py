"""Result tables stay legible at 80 columns; the trace names react turns and format errors."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from paraagent_runtime.actions import FormatError, FormatErrorKind
from paraagent_runtime.report import (
    RunSummary,
    readable_table,
    summarize,
    summary_table,
    trace_table,
)
from paraagent_runtime.tools import ToolCall
from paraagent_runtime.trajectory import Episode, TurnRecord

COLUMNS = ["system", "group", *(f"ndcg@{k}" for k in (1, 3, 5)), "recall@5", "completeness@10"]
ROWS = [
    [system, group, "41.2", "45.0", "48.9", "52.3", "47.1 [44.0, 50.2]"]
    for system in ("bm25", "dense", "hybrid-rrf")
    for group in ("G1 instruction", "G2 category")
]


def _render(width: int, renderable: object) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, no_color=True).print(renderable)
    return buffer.getvalue()


def test_a_wide_table_turns_its_results_into_columns_at_80() -> None:
    console = Console(file=io.StringIO(), width=80)
    shown = _render(80, readable_table(console, COLUMNS, ROWS, title="retrieval"))
    assert "…" not in shown
    assert all(len(line) <= 80 for line in shown.splitlines())
    for header in COLUMNS:
        assert header in shown
    for row in ROWS:
        assert row[1] in shown and row[-1] in shown
    assert shown.count("hybrid-rrf") == 2  # one per group, not three cut "hybr…" cells


def test_a_table_that_fits_stays_one_row_per_result() -> None:
    console = Console(file=io.StringIO(), width=200)
    table = readable_table(console, COLUMNS, ROWS)
    assert isinstance(table, Table) and table.row_count == len(ROWS)


def test_the_trace_calls_react_turns_calls_and_shows_format_errors() -> None:
    call = ToolCall(id="t0-0", name="search_tools", arguments={"query": "weather"})
    error = FormatError(kind=FormatErrorKind.UNKNOWN_PHASE, message='unknown phase "wander"')
    episode = Episode(
        task="hi",
        mode="react",
        turns=[
            TurnRecord(index=0, text="", phase=None, calls=[call]),
            TurnRecord(index=1, text="", format_errors=[error]),
        ],
    )
    shown = _render(100, trace_table(episode))
    assert "None" not in shown
    assert "│    0 │ call " in shown
    assert "⚠ format error [unknown_phase]" in shown and '"wander"' in shown


def test_the_run_summary_gives_success_with_its_wilson_interval() -> None:
    summary = RunSummary(
        episodes=6, answered=6, checked=6, succeeded=3, success_rate=0.5, mean_turns=3.0,
        mean_calls=4.0, mean_calls_per_tool_turn=1.5, mean_duration_s=10.0,
    )  # fmt: skip
    shown = _render(80, summary_table(summary))
    assert "success (checked) [95% CI]" in shown and "3/6 = 50% [19%, 81%]" in shown
    assert "no answer" not in shown


def test_the_run_summary_says_how_unanswered_episodes_ended() -> None:
    episodes = [
        Episode(task="a", status="answered", answer="x"),
        Episode(task="b", status="repeating"),
        Episode(task="c", status="max_turns"),
        Episode(task="d", status="repeating"),
    ]
    summary = summarize(episodes)
    assert summary.answered == 1 and summary.unanswered == {"repeating": 2, "max_turns": 1}
    row = next(
        line for line in _render(80, summary_table(summary)).splitlines() if "no answer" in line
    )
    assert row.split("│")[2].strip() == "2 repeating, 1 max_turns"

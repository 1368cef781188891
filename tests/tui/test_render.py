"""Turn text for display, latencies and argument summaries."""

from __future__ import annotations

import pytest

from paraagent_runtime.errors import UserError
from paraagent_runtime.sources import FunctionToolSource
from paraagent_runtime.toolspace import Toolspace
from tui.render import display_text, format_latency, summarize_arguments


def test_display_text_drops_calls_and_tags_and_quotes_reasoning():
    raw = '<think>two cities</think><phase>execute</phase><tool_call>{"name": "a"}</tool_call>'
    assert display_text(raw) == "> two cities"
    assert display_text("<answer>Paris, **15 °C**</answer>") == "Paris, **15 °C**"


@pytest.mark.parametrize("partial", ["<think>hm", "<phase>exe", '<tool_call>{"na', "<tool_c", "<"])
def test_display_text_handles_streaming_prefixes(partial):
    assert "<" not in display_text(partial)
    assert "tool_call" not in display_text(partial) and "exe" not in display_text(partial)


def test_format_latency():
    assert format_latency(0.0004) == "0.40 ms"
    assert format_latency(0.0421) == "42 ms"
    assert format_latency(1.5) == "1.50 s"
    assert format_latency(1.5, shown=False) == "—"


def test_summarize_arguments_is_one_short_line():
    assert summarize_arguments({"city": "Paris", "days": 3}) == 'city="Paris", days=3'
    assert len(summarize_arguments({"text": "x" * 500}, width=40)) == 40


def test_a_wrapper_may_not_rename_a_source():
    class Renamed:
        name = "other"

    toolspace = Toolspace([FunctionToolSource("files", [])])
    with pytest.raises(UserError, match="renamed tool source 'files'"):
        toolspace.wrap_sources(lambda source: Renamed())

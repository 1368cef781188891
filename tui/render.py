"""Text helpers shared by the widgets: turn text, latencies, argument summaries, format errors."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.dom import DOMNode

if TYPE_CHECKING:
    from paraagent_runtime.actions import FormatError

__all__ = [
    "count_of",
    "display_text",
    "format_latency",
    "format_problems",
    "summarize_arguments",
    "timings_shown",
]

_TOOL_CALL = re.compile(r"<tool_call>.*?(?:</tool_call>|\Z)", re.DOTALL)
_PHASE = re.compile(r"<phase>.*?(?:</phase>|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.DOTALL)
_ANSWER_TAG = re.compile(r"</?answer>")
_PARTIAL_TAG = re.compile(r"<[a-z_/]*\Z")


def _quote(match: re.Match[str]) -> str:
    body = match.group(1).strip()
    return "\n".join("> " + line for line in body.splitlines()) + "\n\n" if body else ""


def display_text(raw: str) -> str:
    """Turn (possibly partial) model text into Markdown for the conversation.

    Tool calls and phase tags are dropped (the calls panel and the badge show them), reasoning
    becomes a block quote and the answer tags are removed. Unclosed blocks at the end of a
    streaming text are handled as if they ran to the end.
    """
    text = _PARTIAL_TAG.sub("", raw)
    text = _TOOL_CALL.sub("", text)
    text = _PHASE.sub("", text)
    text = _THINK.sub(_quote, text)
    text = _ANSWER_TAG.sub("", text)
    return text.strip()


def count_of(number: int, noun: str) -> str:
    """``1 call``, ``2 calls``: a count with its noun, plural when it is not one."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_latency(seconds: float, *, shown: bool = True) -> str:
    """A latency for people (``—`` when timings are hidden, for reproducible screenshots)."""
    if not shown:
        return "—"
    if seconds < 0.001:
        return f"{seconds * 1000:.2f} ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s"


def summarize_arguments(arguments: dict[str, Any], *, width: int = 60) -> str:
    """``key=value, …`` on one line, shortened to ``width`` characters."""
    parts = [
        f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
        for key, value in arguments.items()
    ]
    return _shorten(", ".join(parts), width)


def timings_shown(node: DOMNode) -> bool:
    """Whether the app of ``node`` shows measured latencies (its ``show_timings``, default on)."""
    return bool(getattr(node.app, "show_timings", True))


def format_problems(problems: Sequence[FormatError]) -> Text:
    """A turn's format errors, one per line: kind, message, and the offending fragment."""
    text = Text()
    for position, problem in enumerate(problems):
        if position:
            text.append("\n")
        text.append(f"✗ {problem.kind.value}: ", style="bold red")
        text.append(problem.message, style="red")
        if problem.fragment and problem.fragment not in problem.message:
            fragment = _shorten(" ".join(problem.fragment.split()), 80)
            text.append(f"\n    {fragment}", style="dim")
    return text

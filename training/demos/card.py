"""The dataset card of a demonstration set: provenance, counts and statistics (JSON + markdown)."""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import config_to_dict
from .filters import assistant_turns

if TYPE_CHECKING:
    from .config import DemoConfig
    from .dataset import Demo

__all__ = ["card_stats", "coverage", "phrasing_of", "provenance", "write_card"]

_PROVENANCE = (
    "Demonstrations were produced by scripted planner / explorer / executor / verifier roles that "
    "read ToolEnv's privileged task information (the gold call DAG and the answer facts) to decide "
    "what to do. Every call really ran through the paraagent agent loop, dispatcher and the "
    "ToolEnv simulator, so tool cards and results are real. The reasoning in <think> mentions "
    "what the trajectory has shown at that point (the query, returned cards and results), except "
    "as the search wording below says. Answers are the task's gold answer, emitted only after the "
    "verifier found every answer fact in the observed results and the ToolEnv checker accepted it."
)
_NEED_WORDING = {
    "request": "Needs and their searches repeat the query's own words, with two privileged hints: "
    "what the query's values are (the gold argument's name) and, on a search retried after a "
    "miss, the gold tool's name.",
    "description": "Needs and their searches are the first clause of the gold tool's description "
    "(privileged: it names the tool to find); a search retried after a miss guesses the gold "
    "tool's name and provider.",
}
_FIRST_SEARCH = {
    "need": "",
    "request": " Each episode first searches with the whole query (stop words dropped) and keeps "
    "the cards that fit; only the tools it missed get a search of their own.",
}
_ANSWER_NOTES = {
    "labels": "",
    "sources": " The answer's reasoning names, for every fact, the result field it was read from.",
}


def provenance(config: DemoConfig) -> str:
    """How the demonstrations of ``config`` were made, privileged information included."""
    return (
        f"{_PROVENANCE} {_NEED_WORDING[config.need_words]}{_FIRST_SEARCH[config.first_search]}"
        f"{_ANSWER_NOTES[config.answer_notes]}"
    )


def _summary(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "min": 0.0, "max": 0.0}
    return {"mean": round(statistics.fmean(values), 2), "min": min(values), "max": max(values)}


_NUMBER = re.compile(r"\d[\d.,:/-]*")
_NAME = re.compile(r"(?<=[^.?!]\s)[A-Z][\w'&.-]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def phrasing_of(query: str) -> str:
    """A query's wording with its values masked: numbers, quoted text and capitalized names.

    Two queries with the same result are one phrasing filled with other values.
    """
    return _NAME.sub("N", _NUMBER.sub("#", _QUOTED.sub("'…'", query))).strip()


def coverage(demos: Sequence[Demo]) -> dict[str, Any]:
    """What a demo set covers: sources, and distinct providers, categories, tools, phrasings."""
    tools = {tool for demo in demos for tool in demo.tools}
    queries = [next((m.content for m in demo.messages if m.role == "user"), "") for demo in demos]
    return {
        "by_source": dict(sorted(Counter(demo.source for demo in demos).items())),
        "providers": len({tool.split("/", 1)[0] for tool in tools}),
        "categories": len({category for demo in demos for category in demo.categories}),
        "tools": len(tools),
        "phrasings": len({phrasing_of(query) for query in queries if query}),
    }


def card_stats(demos: Sequence[Demo]) -> dict[str, Any]:
    """Counts and distributions of a demo set."""
    execute_widths = []
    chars = []
    for demo in demos:
        chars.append(sum(len(message.content) for message in demo.messages))
        execute_widths.extend(
            len(t.calls) for t in assistant_turns(demo.messages) if t.calls and t.phase == "execute"
        )
    return {
        "count": len(demos),
        "coverage": coverage(demos),
        "by_group": dict(sorted(Counter(d.group for d in demos).items())),
        "by_family": dict(sorted(Counter(d.family for d in demos).items())),
        "by_style": dict(sorted(Counter(d.style for d in demos).items())),
        "by_recovery": dict(sorted(Counter(d.recovery or "none" for d in demos).items())),
        "phase_switches": dict(sorted(Counter(d.phase_switches for d in demos).items())),
        "tool_turns": _summary([d.tool_turns for d in demos]),
        "calls": _summary([d.calls for d in demos]),
        "calls_per_execute_turn": _summary(execute_widths),
        "gold_depth": _summary([d.gold_depth for d in demos]),
        "chars": _summary(chars),
    }


def write_card(
    out: Path,
    config: DemoConfig,
    *,
    kept: Sequence[Demo],
    passed: Sequence[Demo],
    rejected: Sequence[Demo],
    candidates: int,
) -> Path:
    """Write ``card.json`` and ``card.md`` into ``out``; returns the markdown path."""
    reasons = Counter(reason.split(":")[0] for demo in rejected for reason in demo.rejected)
    card = {
        "provenance": provenance(config),
        "config": config_to_dict(config),
        "candidates": candidates,
        "passed_filters": len(passed),
        "rejected": len(rejected),
        "rejection_reasons": dict(reasons.most_common()),
        "kept": card_stats(kept),
    }
    (out / "card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    stats = card["kept"]
    lines = [
        "# ParaAct cold-start demonstrations",
        "",
        card["provenance"],
        "",
        f"- mode: `{config.mode}`, split: `{config.split}`, seed: {config.seed}",
        f"- candidates: {candidates}, passed filters: {len(passed)}, rejected: {len(rejected)}, "
        f"kept (balanced): {stats['count']}",
        f"- rejection reasons: {json.dumps(card['rejection_reasons'])}",
        f"- task source: `{config.task_source.kind}`"
        + (
            f" (catalog share {config.task_source.catalog_share})"
            if config.task_source.kind == "mixed"
            else ""
        ),
        "- coverage (kept): {providers} providers, {categories} categories, {tools} tools, "
        "{phrasings} phrasings (queries with numbers, quoted text and names masked); "
        "by source {by_source}".format(
            **{**stats["coverage"], "by_source": json.dumps(stats["coverage"]["by_source"])}
        ),
        "- filters: answer passes the ToolEnv checker; every turn grammar-valid (strict parse); "
        "no call in a batch depends on another call of the same batch; "
        f"at most {config.max_irrelevant_calls} call(s) outside the gold DAG; "
        f"tool turns <= gold depth + {config.turn_slack}",
        "- recovered demos: the turn with the injected mistake is listed in `mistake_turns`; SFT "
        "keeps it in the context but puts no loss on it",
        "",
        "| statistic | value |",
        "|---|---|",
    ]
    for key, value in stats.items():
        if key not in ("count", "coverage"):
            lines.append(f"| {key} | `{json.dumps(value)}` |")
    path = out / "card.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

"""Every split of one evaluation on one page (``paraagent eval toolenv --split all --summary``).

One markdown file (a table per split with 95% intervals and each mode's paired difference to
the first mode, plus example queries) and one JSON file (every split's
:class:`~.evaluation.EvalReport`, per-episode outcomes included, so any two modes or runs
compare paired by task).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .evaluation import EvalReport, markdown_table

__all__ = ["EXAMPLES_PER_SPLIT", "SplitRun", "splits_markdown", "write_splits"]

EXAMPLES_PER_SPLIT = 5
"""Example queries shown per split."""


@dataclass(frozen=True)
class SplitRun:
    """One split's report and the queries of its first tasks."""

    report: EvalReport
    examples: tuple[str, ...]


def splits_markdown(runs: Sequence[SplitRun], *, command: str) -> str:
    """A markdown page: how it was made, then per split its table and example queries."""
    lines = [
        f"# ToolEnv `{runs[0].report.policy}` by split ({runs[0].report.catalog} catalog)"
        if runs
        else "# (no split)",
        "",
        f"Made by `{command}`. Intervals are 95% (Wilson for success, bootstrap over tasks for "
        "means); differences between modes are paired by task.",
    ]
    for run in runs:
        lines += ["", f"## {run.report.scope}", "", markdown_table(run.report).rstrip("\n"), ""]
        lines += ["Example queries:", ""]
        lines += [f"{index}. {query}" for index, query in enumerate(run.examples, start=1)]
    return "\n".join(lines) + "\n"


def write_splits(runs: Sequence[SplitRun], stem: Path, *, command: str) -> tuple[Path, Path]:
    """Write ``<stem>.md`` and ``<stem>.json`` (every report with its episodes)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    markdown, data = stem.with_suffix(".md"), stem.with_suffix(".json")
    markdown.write_text(splits_markdown(runs, command=command), encoding="utf-8")
    payload = {
        "command": command,
        "splits": [
            {**json.loads(run.report.model_dump_json()), "examples": run.examples} for run in runs
        ],
    }
    data.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return markdown, data

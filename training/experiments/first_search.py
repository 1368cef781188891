"""Which first search finds the gold tools? Recall of search wordings a policy could learn.

A demonstration teaches the policy how to word its first ``search_tools`` call. This measures,
on ``dev`` tasks (never a test split: it chooses the demonstrator), the share of each task's gold
tools that the first search surfaces, with the search the evaluation uses
(:class:`~paraagent_runtime.keyword_search.KeywordToolSearch` over the task's toolspace), for
these wordings:

* ``request``: one search with the whole request (stop words dropped), as
  ``first_search: request`` demonstrates: nothing to choose, the same habit for any request;
* ``pieces``: one search per piece of the request (sentences, then clauses);
* ``request need``: one search per need of ``need_words: request`` demonstrations (the request
  piece a gold tool serves, with what its values are: the gold tool chose the piece: privileged);
* ``description need``: one search per gold tool with its description's first clause, as the
  demonstrations of ParaAgent-135M v1 and v2 (``need_words: description``: names the tool).

    python -m training.experiments.first_search --n 60 --out docs/results/first_search_recall_dev

prints JSON and a table, and with ``--out`` writes ``<out>.json`` and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from paraagent_runtime import Task
from paraagent_runtime.intervals import bootstrap_mean
from paraagent_runtime.keyword_search import KeywordToolSearch
from training.demos.roles import (
    NEED_WORDS,
    NeedWords,
    ScriptedPlanner,
    request_pieces,
    request_query,
)
from training.task_source import TaskSet, TaskSource, build_task_set

__all__ = ["WORDINGS", "first_search_recall"]

Wording = Callable[[Task, dict[NeedWords, dict[str, str]]], list[str]]
"""A task and the demonstrator's needs per :data:`~training.demos.roles.NEED_WORDS` → queries."""

WORDINGS: dict[str, Wording] = {
    "request": lambda task, needs: [request_query(task.query)],
    "pieces": lambda task, needs: request_pieces(task.query),
    "request need": lambda task, needs: list(dict.fromkeys(needs["request"].values())),
    "description need": lambda task, needs: list(needs["description"].values()),
}
"""The first-search wordings compared: each gives the queries of one task's first explore turn
(the needs as the demonstrator's planner words them: once per distinct request need, once per
tool for description needs, as its explorer searches)."""


async def first_search_recall(
    task_set: TaskSet, *, top_ks: Sequence[int] = (2, 5, 8)
) -> list[dict[str, Any]]:
    """One row per wording and ``top_k``: gold-tool recall, all-gold rate and cards shown.

    Recall is the mean over tasks of the share of the task's gold tools among the union of its
    queries' results (bootstrap 95% interval over tasks).
    """
    per_task: dict[tuple[str, int], list[tuple[float, float, int]]] = {}
    for task in task_set.tasks:
        specs = {spec.id: spec for spec in task_set.env_for(task).specs()}
        search = KeywordToolSearch()
        await search.update(list(specs.values()))
        needs: dict[NeedWords, dict[str, str]] = {}
        for style in NEED_WORDS:
            planner = ScriptedPlanner(specs, lazy_prob=0.0, recovery_prob=0.0, need_words=style)
            needs[style] = (await planner.plan(task, random.Random(0))).needs
        gold = set(task.tools)
        for name, wording in WORDINGS.items():
            queries = wording(task, needs)
            for top_k in top_ks:
                found = {
                    tool for query in queries for tool, _ in await search.search(query, top_k=top_k)
                }
                per_task.setdefault((name, top_k), []).append(
                    (len(gold & found) / len(gold), float(gold <= found), len(queries) * top_k)
                )
    rows = []
    for (name, top_k), values in per_task.items():
        recall = bootstrap_mean([value[0] for value in values])
        rows.append(
            {
                "wording": name,
                "top_k": top_k,
                "tasks": len(values),
                "recall": recall.estimate,
                "recall_ci": [recall.low, recall.high],
                "all_gold": sum(value[1] for value in values) / len(values),
                "cards_shown": sum(value[2] for value in values) / len(values),
            }
        )
    return rows


def _table(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| tasks | first search | top_k | gold-tool recall [95% CI] | all gold found "
        "| cards shown |",
        "|---|---|---:|---|---:|---:|",
    ]
    for source, rows in results.items():
        for row in rows:
            low, high = row["recall_ci"]
            lines.append(
                f"| {source} ({row['tasks']}) | {row['wording']} | {row['top_k']} | "
                f"{row['recall']:.2f} [{low:.2f}, {high:.2f}] | {row['all_gold']:.2f} | "
                f"{row['cards_shown']:.1f} |"
            )
    return "\n".join(lines)


async def _main(n: int, seed: int, out: Path | None) -> None:
    results = {}
    for kind in ("builtin", "catalog"):
        task_set = build_task_set(TaskSource(kind=kind), n, seed=seed, split="dev")
        results[f"dev {kind}"] = await first_search_recall(task_set)
    print(json.dumps(results, indent=2))
    table = _table(results)
    print(table)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        out.with_suffix(".md").write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=60, help="dev tasks per task source")
    parser.add_argument("--seed", type=int, default=0, help="task seed")
    parser.add_argument("--out", type=Path, default=None, help="write <out>.json and <out>.md")
    arguments = parser.parse_args()
    asyncio.run(_main(arguments.n, arguments.seed, arguments.out))

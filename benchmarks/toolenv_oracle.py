"""ToolEnv v2 oracle table: paraact vs decoupled vs react on every split, with 95% intervals.

For each split of :data:`paraagent_runtime.tasks.SPLITS` it runs the scripted oracle
(:mod:`mcp_servers.toolenv.oracle`) in the three modes on the same tasks, twice: on ``--n``
tasks of the split's default families, and on ``--n`` tasks of its hidden-need families only
(the families where a result reveals a need the query does not state). Success gets a Wilson
interval, mean turns / loaded tools / simulated wall-clock a bootstrap one, and the mode
differences paired bootstrap intervals (paraact minus decoupled, paraact minus react). Model time
is a fixed ``--llm-turn-s`` per turn; tool latency comes from the evaluation's seeded model.

    python -m benchmarks.toolenv_oracle --n 60 --out docs/results/toolenv_v2_oracle

prints JSON and the table, and with ``--out`` writes ``<out>.json`` and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp_servers.toolenv.evaluation import (
    EvalConfig,
    PairedComparison,
    compare_rows,
    evaluate_toolenv,
    metric_intervals,
)
from mcp_servers.toolenv.hidden_needs import STATED_TOOLS
from mcp_servers.toolenv.oracle import oracle_policy
from mcp_servers.toolenv.tasks import generate_tasks, split_families
from paraagent_runtime import SPLITS, EpisodeMetrics

MODES = ("paraact", "decoupled", "react")
PAIRS = (("paraact", "decoupled"), ("paraact", "react"))
METRICS = (
    ("success", "success %"),
    ("turns", "turns"),
    ("loaded_tools", "loaded tools"),
    ("sim_wall_s", "sim wall s"),
)


def _row(episodes: Sequence[EpisodeMetrics]) -> dict[str, Any]:
    by_mode = {mode: [row for row in episodes if row.mode == mode] for mode in MODES}
    pairs: list[PairedComparison] = [
        compare_rows(first, by_mode[first], second, by_mode[second]) for first, second in PAIRS
    ]
    return {
        "tasks": len(by_mode[MODES[0]]),
        "modes": {
            mode: {key: value.as_dict() for key, value in metric_intervals(rows).items()}
            for mode, rows in by_mode.items()
        },
        "differences": [
            {
                "first": pair.first,
                "second": pair.second,
                "tasks": pair.tasks,
                **{key: pair.differences[key].as_dict() for key, _ in METRICS},
            }
            for pair in pairs
        ],
    }


async def _run(
    split: str, families: list[str] | None, *, n: int, seed: int, llm_turn_s: float
) -> tuple[dict[str, Any], list[EpisodeMetrics]]:
    """One evaluation: rows for all its tasks and for its stated-need families alone."""
    tasks = generate_tasks(n, seed=seed, split=split, families=families)
    config = EvalConfig(
        policy="oracle", modes=list(MODES), split=split, n=n, seed=seed, llm_turn_s=llm_turn_s
    )
    episodes = (await evaluate_toolenv(config, oracle_policy, tasks=tasks)).episodes
    stated = [row for row in episodes if row.family not in STATED_TOOLS]
    summary = {
        "families": sorted({task.family for task in tasks}),
        "examples": [task.query for task in tasks[:5]],
        "rows": {"all": _row(episodes), **({"stated_need": _row(stated)} if stated else {})},
        "episodes": [row.model_dump(include=_EPISODE_FIELDS) for row in episodes],
    }
    return summary, episodes


_EPISODE_FIELDS = {"task_id", "family", "mode", "success", "turns", "loaded_tools", "sim_wall_s"}


async def oracle_table(n: int, seed: int, llm_turn_s: float) -> dict[str, Any]:
    """Per split, its default families and its hidden-need families alone; hidden ones pooled."""
    splits: dict[str, Any] = {}
    pooled: list[EpisodeMetrics] = []
    for split in SPLITS:
        hidden = [name for name in split_families(split) if name in STATED_TOOLS]
        default, _ = await _run(split, None, n=n, seed=seed, llm_turn_s=llm_turn_s)
        only, episodes = await _run(split, hidden, n=n, seed=seed, llm_turn_s=llm_turn_s)
        pooled += episodes
        splits[split] = {"default": default, "hidden_need": only}
    return {
        "n": n,
        "seed": seed,
        "llm_turn_s": llm_turn_s,
        "splits": splits,
        "hidden_need_pooled": _row(pooled),
    }


def _cell(interval: dict[str, Any], key: str) -> str:
    scale, digits = (100.0, 1) if key == "success" else (1.0, 2)
    estimate, low, high = (scale * interval[name] for name in ("estimate", "low", "high"))
    return f"{estimate:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _table(title: str, row: dict[str, Any]) -> list[str]:
    lines = [
        f"**{title}** ({row['tasks']} tasks)",
        "",
        "| mode | " + " | ".join(label for _, label in METRICS) + " |",
        "|---" * (len(METRICS) + 1) + "|",
    ]
    for mode, intervals in row["modes"].items():
        lines.append(
            f"| {mode} | " + " | ".join(_cell(intervals[key], key) for key, _ in METRICS) + " |"
        )
    for pair in row["differences"]:
        lines.append(
            f"| {pair['first']} − {pair['second']} (paired) | "
            + " | ".join(_cell(pair[key], key) for key, _ in METRICS)
            + " |"
        )
    return [*lines, ""]


def markdown(result: dict[str, Any]) -> str:
    """The tables: every split's default and hidden-need runs, then the pooled hidden-need row."""
    lines = [
        "# ToolEnv v2 oracle table (built-in catalog)",
        "",
        f"Oracle policy, {result['n']} tasks per run, seed {result['seed']}, "
        f"{result['llm_turn_s']} s model time per turn; cells are estimate [95% interval]: "
        "Wilson for success, bootstrap for means, paired bootstrap for mode differences. "
        "Written by `python -m benchmarks.toolenv_oracle`.",
        "",
    ]
    for split, runs in result["splits"].items():
        lines += [f"## {split}", ""]
        default = runs["default"]
        lines += _table(f"{split}, default families", default["rows"]["all"])
        if "stated_need" in default["rows"]:
            lines += _table(f"{split}, stated-need families only", default["rows"]["stated_need"])
        lines += _table(f"{split}, hidden-need families", runs["hidden_need"]["rows"]["all"])
        lines += ["Example queries:", ""] + [f"- {q}" for q in default["examples"]] + [""]
    lines += _table("Hidden-need families, all splits pooled", result["hidden_need_pooled"])
    return "\n".join(lines)


def main() -> None:
    """Run the table; print it (and the JSON with ``--json``) and write ``--out`` files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="tasks per run (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm-turn-s", type=float, default=1.0)
    parser.add_argument("--out", type=Path, help="write <out>.json and <out>.md")
    args = parser.parse_args()
    result = asyncio.run(oracle_table(args.n, args.seed, args.llm_turn_s))
    text = markdown(result)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(result) + "\n")
        args.out.with_suffix(".md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()

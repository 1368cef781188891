"""From trajectories: did the policy see a gold tool's card, and did it call a gold tool first?

Success folds three skills together: finding the tool, choosing it among the cards, and turning
its result into the answer. This reads an evaluation's trajectories (``paraagent eval toolenv``
writes ``trajectories-<mode>.jsonl``) and counts, per episode, whether a card of a gold tool came
back before the first execute turn (found) and whether that turn calls a gold tool (chosen).

    python -m training.experiments.tool_choice runs/eval-toolenv-…/trajectories-paraact.jsonl \
        --split test-unseen-tools --n 60 --seed 0

prints one JSON object (the tasks must be the evaluation's: same split, count and seed).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime import Task, model_facing_name

__all__ = ["tool_choice"]

_NAME = re.compile(r'"name":\s*"([^"]+)"')


def tool_choice(episodes: Iterable[dict[str, Any]], tasks: dict[str, Task]) -> dict[str, int]:
    """Episodes, those that saw a gold card before executing, and those whose first call was gold.

    Args:
        episodes: Trajectory rows (``task_id`` and ``messages`` are read).
        tasks: The evaluated tasks by id.
    """
    counts = {"episodes": 0, "gold_card_shown": 0, "gold_tool_called_first": 0}
    for episode in episodes:
        gold = {model_facing_name(tool) for tool in tasks[episode["task_id"]].tools}
        shown: set[str] = set()
        first_calls: set[str] = set()
        for message in episode["messages"]:
            content = str(message["content"])
            if message["role"] == "assistant" and "<phase>execute</phase>" in content:
                first_calls = set(_NAME.findall(content))
                break
            if message["role"] == "tool":
                shown.update(_NAME.findall(content))
        counts["episodes"] += 1
        counts["gold_card_shown"] += bool(gold & shown)
        counts["gold_tool_called_first"] += bool(gold & first_calls)
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("trajectories", type=Path, help="an evaluation's trajectories JSONL")
    parser.add_argument("--split", required=True, help="the evaluated split")
    parser.add_argument("--n", type=int, default=60, help="the evaluated task count")
    parser.add_argument("--seed", type=int, default=0, help="the evaluation's task seed")
    arguments = parser.parse_args()
    evaluated = generate_tasks(arguments.n, seed=arguments.seed, split=arguments.split)
    with arguments.trajectories.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    print(json.dumps(tool_choice(rows, {task.id: task for task in evaluated})))

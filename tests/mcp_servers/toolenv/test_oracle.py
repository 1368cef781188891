"""Oracle on hidden-need tasks: paraact explores lazily, decoupled guesses ahead, react waits."""

from __future__ import annotations

from statistics import mean

import pytest

from mcp_servers.toolenv import builtin_records, generate_tasks
from mcp_servers.toolenv.evaluation import EvalConfig, evaluate_toolenv
from mcp_servers.toolenv.hidden_needs import STATED_TOOLS, revealed_nodes
from mcp_servers.toolenv.oracle import guess_rounds, oracle_policy

HIDDEN = {
    "train": ["flight_packing", "match_budget", "contact_local_time"],
    "test-unseen-tools": ["company_visit_air"],
    "test-unseen-categories": ["meeting_followup"],
}


def test_revealed_nodes_are_the_gold_calls_the_query_does_not_state() -> None:
    task = generate_tasks(1, seed=0, split="train", families=["flight_packing"])[0]
    assert [call.tool for call in task.calls if call.id in revealed_nodes(task)] == [
        "weather/get_forecast",
        "time/get_current_time",
    ]
    stated = generate_tasks(1, seed=0, split="train", families=["flight_arrival_weather"])[0]
    assert revealed_nodes(stated) == set()


def test_a_decoupled_planner_guesses_every_revealed_tool_and_many_more() -> None:
    records = builtin_records()
    for split, families in HIDDEN.items():
        for task in generate_tasks(6, seed=1, split=split, families=families):
            rounds = guess_rounds(sorted(STATED_TOOLS[task.family]), records)
            guessed = {tool for round_ in rounds for tool in round_}
            revealed = {c.tool for c in task.calls if c.id in revealed_nodes(task)}
            assert revealed <= guessed and len(guessed) >= 3 * len(revealed), task.id


@pytest.mark.parametrize("split", list(HIDDEN))
async def test_modes_part_ways_on_hidden_needs(split: str) -> None:
    tasks = generate_tasks(6, seed=0, split=split, families=HIDDEN[split])
    config = EvalConfig(policy="oracle", modes=["paraact", "decoupled", "react"], llm_turn_s=1.0)
    report = await evaluate_toolenv(config, oracle_policy, tasks=tasks)
    rows = {(row.mode, row.task_id): row for row in report.episodes}
    assert all(row.success for row in report.episodes)
    for task in tasks:
        para, decoupled, react = (rows[mode, task.id] for mode in ("paraact", "decoupled", "react"))
        assert para.turns < decoupled.turns and para.loaded_tools < decoupled.loaded_tools
        assert para.sim_wall_s < decoupled.sim_wall_s
        assert para.turns <= react.turns and para.sim_wall_s <= react.sim_wall_s
        # Lazy: at least one explore turn after an execute turn.
        assert para.explore_turns >= 2
    para_wall = mean(rows["paraact", t.id].sim_wall_s for t in tasks)
    assert para_wall < mean(rows["react", t.id].sim_wall_s for t in tasks)

from __future__ import annotations

import json

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime import model_facing_name
from training.experiments.tool_choice import tool_choice


def _episode(task_id: str, cards: list[str], first_call: str) -> dict:
    listing = json.dumps([{"name": name, "description": "", "parameters": []} for name in cards])
    call = json.dumps({"name": first_call, "arguments": {}})
    return {
        "task_id": task_id,
        "messages": [
            {"role": "user", "content": "question"},
            {"role": "assistant", "content": "<phase>explore</phase> <tool_call>{}</tool_call>"},
            {"role": "tool", "content": f'<tool_response name="search_tools">{listing}'},
            {"role": "assistant", "content": f"<phase>execute</phase> <tool_call>{call}"},
            {"role": "tool", "content": json.dumps({"name": "a_later_result"})},
        ],
    }


def test_tool_choice_counts_cards_shown_and_the_first_execute_call() -> None:
    task = generate_tasks(1, seed=0, split="dev", families=["multi_city_weather"])[0]
    gold = model_facing_name(task.tools[0])
    episodes = [
        _episode(task.id, ["maps__search_places", gold], gold),  # found and chosen
        _episode(task.id, ["maps__search_places", gold], "maps__search_places"),  # found only
        _episode(task.id, ["maps__search_places"], gold),  # called without a card
        _episode(task.id, [], "maps__search_places"),
    ]
    assert tool_choice(episodes, {task.id: task}) == {
        "episodes": 4,
        "gold_card_shown": 2,
        "gold_tool_called_first": 2,
    }

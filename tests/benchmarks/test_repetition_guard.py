"""The repetition-guard replay over episodes recorded without the guard."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks import repetition_guard
from paraagent_runtime import (
    Agent,
    AgentConfig,
    FunctionTool,
    FunctionToolSource,
    Toolspace,
    TrajectoryWriter,
)
from paraagent_runtime.policy.scripted import ScriptedPolicy


def _call(city: str) -> str:
    body = json.dumps({"name": "weather__forecast", "arguments": {"city": city}})
    return f"<phase>execute</phase><tool_call>{body}</tool_call>"


@pytest.fixture
async def recorded(tmp_path) -> Any:
    def forecast(city: str) -> dict[str, Any]:
        return {"city": city, "temp_c": 20}

    space = Toolspace(
        [FunctionToolSource("weather", [FunctionTool(forecast, description="Forecast.")])],
        preload_threshold=100,
    )
    await space.refresh()
    path = tmp_path / "trajectories-paraact.jsonl"
    scripts = [
        # four identical turns, then a (successful) answer
        ([_call("Oslo")] * 4 + ["<answer>20</answer>"], True),
        # the same call twice, a different one, then an answer that was wrong
        ([_call("Oslo"), _call("Oslo"), _call("Rome"), "<answer>?</answer>"], False),
        # never repeats
        ([_call("Oslo"), _call("Rome"), "<answer>20</answer>"], True),
    ]
    with TrajectoryWriter(path) as writer:
        for turns, success in scripts:
            config = AgentConfig(max_repeated_turns=0)
            agent = Agent(ScriptedPolicy(turns), space, config, trajectory=writer)
            episode = await agent.run("t", metadata={"success": success})
            assert episode.status == "answered"
    return path


def test_the_replay_counts_what_each_limit_stops_and_loses(recorded, tmp_path, capsys) -> None:
    report = repetition_guard.main(
        [str(recorded), "--limits", "2", "4", "--out", str(tmp_path / "g")]
    )
    by_limit = {row["limit"]: row for row in report["total"]}
    # Limit 2 stops the first two episodes (one success lost, two answers), limit 4 the first.
    assert by_limit[2]["stopped"] == 2 and by_limit[2]["successes_lost"] == 1
    assert by_limit[2]["answers_lost"] == 2 and by_limit[2]["turns_cut"] == 3 + 2
    assert by_limit[4]["stopped"] == 1 and by_limit[4]["turns_cut"] == 1
    assert by_limit[2]["episodes"] == 3 and by_limit[2]["turns"] == 5 + 4 + 3
    assert "repetition guard" in capsys.readouterr().out
    assert (tmp_path / "g.md").read_text().count("\n") == 2 + 2 * 2


def test_limits_below_two_are_refused(recorded) -> None:
    with pytest.raises(SystemExit):
        repetition_guard.main([str(recorded), "--limits", "1"])

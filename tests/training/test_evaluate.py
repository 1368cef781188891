from __future__ import annotations

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.trajectory import TrajectoryWriter, read_episodes
from training.demos import DemoBuild
from training.evaluate import evaluate_policy


async def test_replaying_a_demo_through_the_agent_reproduces_it(
    demo_build: DemoBuild, tmp_path
) -> None:
    demo = demo_build.demos[0]
    task = {t.id: t for t in generate_tasks(36, seed=3)}[demo.task_id]
    turns = [m.content for m in demo.messages if m.role == "assistant"]
    with TrajectoryWriter(tmp_path / "replay.jsonl") as writer:
        summary, rows = await evaluate_policy(
            ScriptedPolicy(turns), [task], model="replay", trajectory=writer
        )
    [episode] = read_episodes(tmp_path / "replay.jsonl")
    assert episode.messages == demo.messages
    assert summary.success_rate == 1.0 and summary.answered == 1
    assert rows[0].turns == len(turns)
    assert rows[0].calls == demo.calls


async def test_a_wrong_answer_scores_zero() -> None:
    task = generate_tasks(1, seed=0, families=["city_pair_facts"])[0]
    policy = ScriptedPolicy(["<answer>no idea</answer>"])
    summary, rows = await evaluate_policy(policy, [task], model="guess")
    assert summary.success_rate == 0.0 and rows[0].status == "answered"
    assert summary.calls_per_execute_turn == 0.0

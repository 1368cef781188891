from __future__ import annotations

import pytest

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.actions import Turn, render_turn
from paraagent_runtime.naming import model_facing_name
from paraagent_runtime.policy.base import Message
from paraagent_runtime.tasks import Task
from paraagent_runtime.tools import ToolCall
from training.demos import DemoBuild, FilterLimits, filter_trajectory, irrelevant_calls
from training.demos.filters import assistant_turns, tool_turn_limit


def _task(family: str) -> Task:
    return generate_tasks(1, seed=0, families=[family])[0]


def _turn(phase: str | None, calls: list[tuple[str, dict]]) -> Message:
    turn = Turn(
        think="t",
        phase=phase,
        calls=[
            ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)
        ],
    )
    return Message(role="assistant", content=render_turn(turn))


def _answer(text: str) -> Message:
    return Message(role="assistant", content=render_turn(Turn(answer=text)))


def _gold_messages(
    task: Task, *, batches: list[list[str]] | None = None, extra: list[Message] | None = None
) -> list[Message]:
    nodes = {call.id: call for call in task.calls}
    messages = [Message(role="system", content="s"), Message(role="user", content=task.query)]
    messages.append(_turn("explore", [("search_tools", {"query": "x"})]))
    messages.append(Message(role="tool", content="[]"))
    for batch in batches or task.levels():
        messages.append(
            _turn(
                "execute", [(model_facing_name(nodes[n].tool), nodes[n].arguments) for n in batch]
            )
        )
        messages.append(Message(role="tool", content="{}"))
    messages.extend(extra or [])
    messages.append(_answer(task.gold_answer))
    return messages


def test_a_correct_trajectory_is_kept() -> None:
    task = _task("flight_arrival_weather")
    verdict = filter_trajectory(task, _gold_messages(task), task.gold_answer, FilterLimits())
    assert verdict.kept, verdict.reasons


def test_wrong_answer_is_rejected() -> None:
    task = _task("city_pair_facts")
    verdict = filter_trajectory(task, _gold_messages(task), "They are close.", FilterLimits())
    assert verdict.reasons == ["answer_check"]
    assert (
        "answer_check"
        in filter_trajectory(task, _gold_messages(task), None, FilterLimits()).reasons
    )


def test_malformed_turn_is_rejected() -> None:
    task = _task("city_pair_facts")
    messages = _gold_messages(task)
    messages.insert(2, Message(role="assistant", content='<tool_call>{"name": broken</tool_call>'))
    assert "grammar" in filter_trajectory(task, messages, task.gold_answer, FilterLimits()).reasons


def test_trajectory_without_final_answer_is_rejected() -> None:
    task = _task("city_pair_facts")
    messages = _gold_messages(task)[:-1]
    assert "grammar" in filter_trajectory(task, messages, task.gold_answer, FilterLimits()).reasons


def test_dependent_calls_in_one_batch_are_rejected() -> None:
    task = _task("flight_arrival_weather")
    flat = [[node for level in task.levels() for node in level]]
    verdict = filter_trajectory(
        task, _gold_messages(task, batches=flat), task.gold_answer, FilterLimits()
    )
    assert "dependent_calls" in verdict.reasons


def test_transitive_dependency_counts() -> None:
    task = _task("trip_briefing")
    first, last = task.levels()[0][0], task.levels()[-1][0]
    rest = [n for level in task.levels() for n in level if n not in (first, last)]
    batches = [rest[:0] + [first, last], rest]
    verdict = filter_trajectory(
        task, _gold_messages(task, batches=batches), task.gold_answer, FilterLimits()
    )
    assert "dependent_calls" in verdict.reasons


def test_irrelevant_calls_beyond_the_limit_are_rejected() -> None:
    task = _task("city_pair_facts")
    one = [
        _turn("execute", [("weather__get_current_weather", {"city": "Paris"})]),
        Message(role="tool", content="{}"),
    ]
    two = one + one
    assert filter_trajectory(
        task, _gold_messages(task, extra=one), task.gold_answer, FilterLimits()
    ).kept
    verdict = filter_trajectory(
        task, _gold_messages(task, extra=two), task.gold_answer, FilterLimits()
    )
    assert verdict.reasons == ["irrelevant_calls"]
    assert irrelevant_calls(task, assistant_turns(_gold_messages(task, extra=two))) == 2


def test_too_many_turns_are_rejected() -> None:
    task = _task("city_pair_facts")
    repeat = [
        _turn("explore", [("search_tools", {"query": "y"})]),
        Message(role="tool", content="[]"),
    ] * 4
    verdict = filter_trajectory(
        task, _gold_messages(task, extra=repeat), task.gold_answer, FilterLimits()
    )
    assert verdict.reasons == ["too_many_turns"]
    assert (
        tool_turn_limit(task, FilterLimits(mode="react")) == len(task.calls) + len(task.tools) + 3
    )


def test_react_mode_rejects_parallel_calls_and_phase_tags() -> None:
    task = _task("city_pair_facts")
    verdict = filter_trajectory(
        task, _gold_messages(task), task.gold_answer, FilterLimits(mode="react")
    )
    assert "grammar" in verdict.reasons


@pytest.mark.parametrize("index", [0, 1, 2])
def test_filters_keep_the_built_demos(demo_build: DemoBuild, index: int) -> None:
    demo = demo_build.demos[index]
    task = {t.id: t for t in generate_tasks(36, seed=3)}[demo.task_id]
    assert filter_trajectory(task, demo.messages, demo.answer, FilterLimits()).kept

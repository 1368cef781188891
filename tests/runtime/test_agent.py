"""The agent loop over a real in-process toolspace, driven by a scripted policy."""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import pytest

from paraagent_runtime.agent import Agent, AgentConfig
from paraagent_runtime.dispatch import DispatchConfig
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.events import (
    AnswerEvent,
    CallFinished,
    CallStarted,
    EpisodeFinished,
    ErrorEvent,
    TextDelta,
)
from paraagent_runtime.meta import META_TOOLS
from paraagent_runtime.policy.base import Message
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.tools import ToolAnnotations, ToolErrorKind
from paraagent_runtime.toolspace import Toolspace
from paraagent_runtime.trajectory import TrajectoryWriter, read_episodes


class Tracker:
    """Counts calls in flight so tests can see parallelism without timing."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.max_in_flight = 0
        self.started = asyncio.Event()

    async def enter(self, hold: float = 0.05) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.started.set()
        try:
            await asyncio.sleep(hold)
        finally:
            self.in_flight -= 1


@pytest.fixture
def tracker() -> Tracker:
    return Tracker()


@pytest.fixture
async def toolspace(tracker: Tracker) -> Toolspace:
    async def forecast(city: str) -> dict[str, Any]:
        await tracker.enter()
        return {"city": city, "temp_c": len(city) * 2.5}

    async def hang(seconds: float = 60) -> str:
        await tracker.enter(hold=seconds)
        return "never"

    def explode() -> None:
        raise RuntimeError("disk on fire")

    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    weather = FunctionToolSource(
        "weather",
        [
            FunctionTool(
                forecast,
                description="Weather forecast for a city.",
                input_schema=city,
                annotations=ToolAnnotations(read_only=True),
            ),
            FunctionTool(
                hang,
                description="A tool that hangs.",
                input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
            ),
            FunctionTool(explode, description="A tool that raises."),
        ],
    )
    space = Toolspace([weather], preload_threshold=0)
    await space.refresh()
    return space


def call(tool: str, /, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': tool, 'arguments': arguments})}</tool_call>"


EXPLORE = (
    "<phase>explore</phase>"
    + call("search_tools", query="weather forecast city")
    + call("inspect_tool", name="weather__forecast")
)
EXECUTE = (
    "<phase>execute</phase>"
    + call("weather__forecast", city="Paris")
    + call("weather__forecast", city="Rome")
)


async def test_paraact_episode_runs_parallel_calls_and_writes_trajectory(
    toolspace, tracker, tmp_path
) -> None:
    policy = ScriptedPolicy([EXPLORE, EXECUTE, "<answer>Paris 12.5, Rome 10.0</answer>"])
    events: list[Any] = []
    with TrajectoryWriter(tmp_path / "t.jsonl") as writer:
        agent = Agent(policy, toolspace, trajectory=writer)
        episode = await agent.run("weather in Paris and Rome", task_id="w1", on_event=events.append)
    assert episode.status == "answered" and episode.answer == "Paris 12.5, Rome 10.0"
    assert [t.phase for t in episode.turns[:2]] == ["explore", "execute"]
    assert all(r.ok for t in episode.turns for r in t.results)
    assert [r.content["temp_c"] for r in episode.turns[1].results] == [12.5, 10.0]
    assert tracker.max_in_flight == 2
    assert episode.phase_counts() == {"explore": 1, "execute": 1, "answer": 1}
    assert sum(isinstance(e, CallStarted) for e in events) == 4
    assert sum(isinstance(e, CallFinished) for e in events) == 4
    assert any(isinstance(e, TextDelta) for e in events)
    assert isinstance(events[-1], EpisodeFinished) and isinstance(events[-2], AnswerEvent)
    # the model saw the observations as one tool message per turn, in call order
    tool_message = policy.calls[2][-1]
    assert tool_message.role == "tool" and tool_message.content.index(
        'id="t1_0"'
    ) < tool_message.content.index('id="t1_1"')
    (stored,) = list(read_episodes(tmp_path / "t.jsonl"))
    assert stored.model_dump() == episode.model_dump()
    packed = tmp_path / "t.jsonl.gz"
    packed.write_bytes(gzip.compress((tmp_path / "t.jsonl").read_bytes()))
    assert [e.model_dump() for e in read_episodes(packed)] == [episode.model_dump()]


async def test_unloaded_tool_is_an_error_observation_and_the_episode_goes_on(toolspace) -> None:
    policy = ScriptedPolicy([EXECUTE, EXPLORE, EXECUTE, "<answer>ok</answer>"])
    episode = await Agent(policy, toolspace).run("weather")
    assert [r.error_kind for r in episode.turns[0].results] == [ToolErrorKind.UNLOADED_TOOL] * 2
    assert all(r.ok for r in episode.turns[2].results)
    assert episode.status == "answered"


@pytest.mark.parametrize(
    ("turn", "kind"),
    [
        (call("nope__tool", x=1), ToolErrorKind.UNKNOWN_TOOL),
        (call("weather__forecast", town="Paris"), ToolErrorKind.INVALID_ARGUMENTS),
        (call("weather__explode"), ToolErrorKind.TOOL_ERROR),
        (call("weather__hang", seconds=30), ToolErrorKind.TIMEOUT),
    ],
)
async def test_bad_calls_become_typed_observations(
    toolspace, turn: str, kind: ToolErrorKind
) -> None:
    space_all = Toolspace(list(toolspace.sources.values()), preload_threshold=100)
    await space_all.refresh()
    # Only the hanging call may time out: the others get a limit they cannot reach.
    timeout_s = 0.2 if kind is ToolErrorKind.TIMEOUT else 300
    config = AgentConfig(dispatch=DispatchConfig(call_timeout_s=timeout_s))
    episode = await Agent(
        ScriptedPolicy([turn, "<answer>gave up</answer>"]), space_all, config
    ).run("t")
    (result,) = episode.turns[0].results
    assert result.error_kind == kind and result.error
    assert episode.status == "answered"


async def test_malformed_turn_gets_feedback_and_the_episode_continues(toolspace) -> None:
    policy = ScriptedPolicy(
        [
            '<tool_call>{"name": "search_tools", "arguments": {"query": </tool_call>',
            "<answer>fine</answer>",
        ]
    )
    episode = await Agent(policy, toolspace).run("t")
    assert episode.turns[0].format_errors and not episode.turns[0].calls
    assert "not valid JSON" in policy.calls[1][-1].content
    assert episode.answer == "fine"


async def test_policy_failure_ends_cleanly_and_is_written(toolspace, tmp_path) -> None:
    events: list[Any] = []
    with TrajectoryWriter(tmp_path / "t.jsonl") as writer:
        episode = await Agent(ScriptedPolicy([EXPLORE]), toolspace, trajectory=writer).run(
            "t", on_event=events.append
        )
    assert episode.status == "error" and "no turn left" in (episode.error or "")
    assert any(isinstance(e, ErrorEvent) and e.fatal for e in events)
    assert [e.status for e in read_episodes(tmp_path / "t.jsonl")] == ["error"]


async def test_max_turns(toolspace) -> None:
    config = AgentConfig(max_turns=3, max_repeated_turns=0)
    episode = await Agent(ScriptedPolicy([EXPLORE] * 3), toolspace, config).run("t")
    assert episode.status == "max_turns" and len(episode.turns) == 3


async def test_a_turn_repeating_calls_and_results_ends_the_episode(toolspace) -> None:
    swapped = (
        "<phase>execute</phase>"
        + call("weather__forecast", city="Rome")
        + call("weather__forecast", city="Paris")
    )
    policy = ScriptedPolicy([EXPLORE, EXECUTE, swapped, EXECUTE, "<answer>never</answer>"])
    episode = await Agent(policy, toolspace, AgentConfig(max_repeated_turns=3)).run("t")
    # The order of parallel calls and their ids do not matter: turns 1-3 are the same turn.
    assert episode.status == "repeating" and len(episode.turns) == 4
    assert episode.answer is None and len(policy.calls) == 4


async def test_a_turn_without_calls_breaks_a_repetition(toolspace) -> None:
    malformed = '<tool_call>{"name": </tool_call>'
    turns = [EXECUTE, EXECUTE, malformed, EXECUTE, EXECUTE, "<answer>done</answer>"]
    episode = await Agent(ScriptedPolicy(turns), toolspace, AgentConfig(max_repeated_turns=3)).run(
        "t"
    )
    assert episode.status == "answered" and len(episode.turns) == 6


async def test_polling_a_tool_whose_result_changes_is_not_a_repetition() -> None:
    polls = iter(["queued", "running", "running", "done"])
    source = FunctionToolSource(
        "jobs",
        [FunctionTool(lambda: {"state": next(polls)}, name="status", description="Job state.")],
    )
    space = Toolspace([source], preload_threshold=100)
    await space.refresh()
    poll = "<phase>execute</phase>" + call("jobs__status")
    policy = ScriptedPolicy([poll] * 4 + ["<answer>done</answer>"])
    episode = await Agent(policy, space, AgentConfig(max_repeated_turns=2)).run("t")
    # "running" twice in a row is the one repetition: a limit of 2 stops there, 3 would not.
    assert episode.status == "repeating" and len(episode.turns) == 3
    polls = iter(["queued", "running", "running", "done"])
    episode = await Agent(
        ScriptedPolicy([poll] * 4 + ["<answer>done</answer>"]),
        space,
        AgentConfig(max_repeated_turns=3),
    ).run("t")
    assert episode.status == "answered" and episode.turns[3].results[0].content == {"state": "done"}


async def test_cancel_mid_turn_cancels_calls_and_writes_episode(
    toolspace, tracker, tmp_path
) -> None:
    policy = ScriptedPolicy(
        [
            EXPLORE.replace("weather__forecast", "weather__hang"),
            "<phase>execute</phase>"
            + call("weather__hang")
            + call("weather__forecast", city="Oslo"),
        ]
    )
    finished = asyncio.Event()
    with TrajectoryWriter(tmp_path / "t.jsonl") as writer:
        agent = Agent(policy, toolspace, trajectory=writer)
        task = asyncio.create_task(
            agent.run(
                "t",
                on_event=lambda e: (
                    finished.set() if isinstance(e, CallFinished) and e.turn == 1 else None
                ),
            )
        )
        await asyncio.wait_for(finished.wait(), 10)  # the forecast is back, the hang runs
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert tracker.in_flight == 0
    (episode,) = read_episodes(tmp_path / "t.jsonl")
    assert episode.status == "cancelled"
    # The turn that was running keeps what it got: one result, one cancelled call.
    hang, forecast = episode.turns[1].results
    assert forecast.ok and forecast.content == {"city": "Oslo", "temp_c": 10.0}
    assert hang.error_kind is ToolErrorKind.CANCELLED and hang.name == "weather__hang"


async def test_react_mode_runs_one_call_per_turn(toolspace) -> None:
    policy = ScriptedPolicy([EXPLORE, EXECUTE, "<answer>x</answer>"])
    episode = await Agent(policy, toolspace, AgentConfig(mode="react")).run("t")
    for turn in episode.turns:
        assert sum(r.error_kind != ToolErrorKind.TOO_MANY_CALLS for r in turn.results) <= 1
    assert episode.turns[0].results[1].error_kind == ToolErrorKind.TOO_MANY_CALLS
    assert "exactly ONE tool call" in policy.calls[0][0].content


async def test_decoupled_mode_never_explores_after_executing(toolspace) -> None:
    policy = ScriptedPolicy([EXPLORE, EXECUTE, EXPLORE, "<answer>x</answer>"])
    episode = await Agent(policy, toolspace, AgentConfig(mode="decoupled")).run("t")
    assert all(r.ok for r in episode.turns[0].results)
    assert [r.error_kind for r in episode.turns[2].results] == [ToolErrorKind.PHASE_CLOSED] * 2


MIXED = EXECUTE + call("search_tools", query="air quality")


@pytest.mark.parametrize(("mode", "search_runs"), [("paraact", True), ("decoupled", False)])
async def test_only_paraact_explores_inside_an_execute_turn(toolspace, mode, search_runs) -> None:
    policy = ScriptedPolicy([EXPLORE, MIXED, "<answer>x</answer>"])
    episode = await Agent(policy, toolspace, AgentConfig(mode=mode)).run("t")
    forecasts, (search,) = episode.turns[1].results[:2], episode.turns[1].results[2:]
    assert all(result.ok for result in forecasts)
    assert search.ok is search_runs
    if not search_runs:
        assert search.error_kind is ToolErrorKind.PHASE_CLOSED


class FormatRecorder(ScriptedPolicy):
    """A scripted policy that also keeps the tools each turn offers (format and OpenAI list)."""

    def __init__(self, turns: list[str]) -> None:
        super().__init__(turns)
        self.callable: list[set[str]] = []

    async def complete(self, messages, *, sampling=None, tools=None, on_text=None):
        offered = {tool.name for tool in sampling.turn_format.tools}
        assert {tool["function"]["name"] for tool in tools} == offered
        self.callable.append(offered)
        return await super().complete(messages, sampling=sampling, tools=tools, on_text=on_text)


@pytest.mark.parametrize("mode", ["paraact", "decoupled"])
async def test_meta_tools_are_no_longer_offered_once_decoupled_exploration_closes(
    toolspace, mode
) -> None:
    policy = FormatRecorder([EXPLORE, EXECUTE, "<answer>x</answer>"])
    config = AgentConfig(mode=mode, pass_tool_schemas=True)
    await Agent(policy, toolspace, config).run("t")
    assert all(META_TOOLS <= tools for tools in policy.callable[:2])
    assert (META_TOOLS <= policy.callable[2]) is (mode == "paraact")
    assert policy.callable[2] - META_TOOLS == policy.callable[1] - META_TOOLS != set()


async def test_events_stream_to_the_episodes_end(toolspace) -> None:
    agent = Agent(ScriptedPolicy([EXPLORE, EXECUTE, "<answer>x</answer>"]), toolspace)
    kinds = [event.type async for event in agent.events("t")]
    assert kinds[0] == "turn_started" and kinds[-1] == "episode_finished"


async def test_closing_the_event_stream_early_cancels_the_episode_and_its_calls(
    toolspace, tracker, tmp_path
) -> None:
    policy = ScriptedPolicy(
        [
            "<phase>explore</phase>" + call("inspect_tool", name="weather__hang"),
            "<phase>execute</phase>" + call("weather__hang"),
        ]
    )
    tracker.started.clear()
    with TrajectoryWriter(tmp_path / "t.jsonl") as writer:
        stream = Agent(policy, toolspace, trajectory=writer).events("t")
        async for event in stream:
            if isinstance(event, CallStarted) and event.call.name == "weather__hang":
                break
        await asyncio.wait_for(tracker.started.wait(), 10)
        assert tracker.in_flight == 1
        await stream.aclose()
    assert tracker.in_flight == 0
    assert asyncio.all_tasks() == {asyncio.current_task()}
    (episode,) = read_episodes(tmp_path / "t.jsonl")
    assert episode.status == "cancelled" and len(episode.turns) == 2


def test_config_is_validated() -> None:
    with pytest.raises(ConfigError, match="mode"):
        AgentConfig(mode="parallel")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_turns"):
        AgentConfig(max_turns=0)
    for bad in (1, -1):
        with pytest.raises(ConfigError, match="max_repeated_turns: must be 0"):
            AgentConfig(max_repeated_turns=bad)
    with pytest.raises(ConfigError, match="prefetch_tools"):
        AgentConfig(prefetch_tools=-1)


async def test_prefetch_loads_the_tools_the_task_text_finds_before_the_first_turn(
    toolspace,
) -> None:
    task = "Weather forecast for a city: Paris and Rome"
    policy = ScriptedPolicy([EXECUTE, "<answer>x</answer>"])
    episode = await Agent(policy, toolspace, AgentConfig(prefetch_tools=1)).run(task)
    assert episode.prefetched_tools == ["forecast"]
    prompt = policy.calls[0][0].content
    assert "These tools are already loaded" in prompt and '"name": "forecast"' in prompt
    assert "search_tools(query, top_k=5)" in prompt  # the rest of the toolspace is a search away
    assert [r.ok for r in episode.turns[0].results] == [True, True]
    without = await Agent(ScriptedPolicy([EXECUTE, "<answer>x</answer>"]), toolspace).run(task)
    assert without.prefetched_tools == []
    assert [r.error_kind for r in without.turns[0].results] == [ToolErrorKind.UNLOADED_TOOL] * 2


async def test_system_prompt_lists_preloaded_tools_for_small_toolspaces(toolspace) -> None:
    small = Toolspace(list(toolspace.sources.values()), preload_threshold=10)
    await small.refresh()
    policy = ScriptedPolicy([EXECUTE, "<answer>x</answer>"])
    episode = await Agent(policy, small).run("t")
    assert '{"name": "forecast"' in policy.calls[0][0].content
    assert all(r.ok for r in episode.turns[0].results)
    assert isinstance(policy.calls[0][0], Message)


async def test_the_prompt_does_not_send_the_model_searching_when_every_tool_is_loaded(
    toolspace,
) -> None:
    small = Toolspace(list(toolspace.sources.values()), preload_threshold=10)
    await small.refresh()
    policy = ScriptedPolicy(["<answer>x</answer>", "<answer>x</answer>"])
    await Agent(policy, small).run("t")
    prompt = policy.calls[0][0].content
    assert "Every tool there is is already loaded" in prompt and "search_tools(" not in prompt
    assert "<phase>explore</phase>" not in prompt
    large = Toolspace(list(toolspace.sources.values()), preload_threshold=1)
    await large.refresh()
    await Agent(policy, large).run("t")
    assert "search_tools(query, top_k=5)" in policy.calls[1][0].content


def test_system_prompt_shows_the_grammar_verbatim() -> None:
    from paraagent_runtime.prompts import system_prompt

    for mode in ("paraact", "react", "decoupled"):
        prompt = system_prompt(mode=mode)
        assert '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>' in prompt
        assert "{{" not in prompt and "{k_max}" not in prompt

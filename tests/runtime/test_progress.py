"""Progress of running calls reaches the agent's events, tagged with the call it belongs to."""

from __future__ import annotations

from typing import Any

from paraagent_runtime.agent import Agent, AgentConfig
from paraagent_runtime.events import CallFinished, CallProgress
from paraagent_runtime.mcp.config import MCPServerConfig
from paraagent_runtime.mcp.source import MCPToolSource, ProgressUpdate
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.progress import current_reporter, report_progress, reporting_to
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.toolspace import Toolspace

from .mcp.servers import build_demo_server


def _call(name: str, **arguments: Any) -> str:
    import json

    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


async def _events(sources: list[Any], turn: str) -> list[Any]:
    toolspace = Toolspace(sources, preload_threshold=10_000)
    await toolspace.refresh()
    events: list[Any] = []
    agent = Agent(
        ScriptedPolicy([turn, "<answer>done</answer>"]), toolspace, AgentConfig(max_turns=3)
    )
    try:
        await agent.run("go", on_event=events.append)
    finally:
        await toolspace.aclose()
    return events


async def test_mcp_progress_of_parallel_calls_of_one_tool_is_told_apart() -> None:
    seen: list[ProgressUpdate] = []
    config = MCPServerConfig(type="memory", timeout=10.0)
    source = MCPToolSource("demo", config, server=build_demo_server([]), on_progress=seen.append)
    turn = (
        "<phase>execute</phase>"
        + _call("demo__sleep", seconds=0)
        + _call("demo__sleep", seconds=0.01)
    )
    events = await _events([source], turn)
    progress = [event for event in events if isinstance(event, CallProgress)]
    finished = [event for event in events if isinstance(event, CallFinished)]
    assert sorted(event.call_id for event in progress) == sorted(
        event.result.call_id for event in finished
    )
    assert len({event.call_id for event in progress}) == 2
    assert {event.label for event in progress} == {"50% half way"}
    for event in progress:
        done = next(f for f in finished if f.result.call_id == event.call_id)
        assert events.index(event) < events.index(done)
    # The source's own callback still sees every notification.
    assert len(seen) == 2


async def test_any_source_can_report_progress_for_the_call_it_serves() -> None:
    async def crunch(rows: int) -> int:
        for done in range(0, rows + 1, rows // 2):
            await report_progress(done, rows, None if done < rows else "done")
        return rows

    source = FunctionToolSource("data", [FunctionTool(crunch)])
    events = await _events([source], _call("data__crunch", rows=10))
    labels = [e.label for e in events if isinstance(e, CallProgress)]
    assert labels == ["0%", "50%", "100% done"]


async def test_reporting_outside_a_dispatched_call_goes_nowhere() -> None:
    heard: list[tuple[float, float | None, str | None]] = []
    assert current_reporter() is None
    await report_progress(1, 2, "before")
    with reporting_to(lambda *update: heard.append(update)):
        await report_progress(1, 2, "inside")
    assert current_reporter() is None
    await report_progress(2, 2, "after")
    assert heard == [(1, 2, "inside")]


def test_progress_labels_without_a_usable_total() -> None:
    def event(progress: float, total: float | None) -> CallProgress:
        return CallProgress(turn=0, call_id="c", name="t", progress=progress, total=total)

    assert event(3, None).label == "3"
    assert event(3, 0).label == "3/0"
    assert event(5, 4).fraction == 1.0


async def test_a_failing_progress_consumer_does_not_fail_the_call() -> None:
    async def crunch(rows: int) -> int:
        await report_progress(1, 2)
        return rows

    toolspace = Toolspace([FunctionToolSource("data", [FunctionTool(crunch)])])
    await toolspace.refresh()
    finished: list[CallFinished] = []

    def on_event(event: Any) -> None:
        if isinstance(event, CallProgress):
            raise RuntimeError("the display broke")
        if isinstance(event, CallFinished):
            finished.append(event)

    turn = _call("data__crunch", rows=3)
    agent = Agent(ScriptedPolicy([turn, "<answer>3</answer>"]), toolspace, AgentConfig())
    episode = await agent.run("go", on_event=on_event)
    assert episode.status == "answered"
    assert [event.result.content for event in finished] == [3]


async def test_a_report_after_the_call_ended_is_dropped() -> None:
    received: list[float] = []
    with reporting_to(lambda progress, total, message: received.append(progress)):
        await report_progress(1)
        late = current_reporter()
    assert late is not None and current_reporter() is None
    await late(2, None, None)  # e.g. an MCP notification delivered after the result
    assert received == [1]

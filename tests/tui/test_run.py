"""Running tasks: parallel turns render, cancellation, failures become notices."""

from __future__ import annotations

import asyncio

from paraagent_runtime.trajectory import read_episodes
from tui.widgets import CallCard, EpisodeView, Timeline, TurnView

from .conftest import SIZE, answer, call, settle, submit, turn

PARALLEL = [
    turn(
        "explore",
        call("search_tools", query="weather forecast"),
        call("search_tools", query="road distance"),
        think="I need weather and distance tools.",
    ),
    turn(
        "execute",
        call("weather__forecast", city="Paris"),
        call("weather__forecast", city="Rome"),
        call("maps__distance", origin="Paris", destination="Rome"),
    ),
    answer("Paris 15 °C, Rome 12 °C, 1,420 km apart."),
]


async def test_parallel_turn_renders_all_calls(make_app):
    app = make_app(PARALLEL)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "Weather in Paris and Rome, and how far apart?")
        await settle(pilot)
        turns = list(app.query(TurnView))
        assert [t.phase for t in turns] == ["explore", "execute", "answer"]
        execute_cards = list(turns[1].query(CallCard))
        assert [c.call.name for c in execute_cards] == [
            "weather__forecast",
            "weather__forecast",
            "maps__distance",
        ]
        assert all(c.state == "ok" for c in execute_cards)
        assert execute_cards[0].result.content == {"city": "Paris", "temp_c": 15, "sky": "clear"}
        explore_cards = list(turns[0].query(CallCard))
        found = str(explore_cards[0].query_one(".tool-cards").render())
        assert "forecast" in found
        timeline = app.query_one(Timeline)
        assert timeline.calls == 5 and timeline.marks == [
            ("explore", 2),
            ("execute", 3),
            ("answer", 0),
        ]
        assert timeline.state == "done"
        assert app.exchanges == [
            (
                "Weather in Paris and Rome, and how far apart?",
                "Paris 15 °C, Rome 12 °C, 1,420 km apart.",
            )
        ]


async def test_escape_cancels_a_hanging_call_and_the_app_stays_responsive(make_app, hang):
    app = make_app(
        [
            turn("execute", call("files__wait"), call("weather__forecast", city="Oslo")),
            answer("unused"),
        ]
    )
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait for the file")
        await asyncio.wait_for(hang.started.wait(), 10)
        await pilot.pause()
        cards = {c.call.name: c for c in app.query(CallCard)}
        assert cards["files__wait"].state == "running"
        header = str(cards["files__wait"].query_one(".call-header").render())
        assert "25% waiting for the file" in header
        await pilot.press("escape")
        await settle(pilot)
        assert hang.cancelled.is_set()
        assert cards["files__wait"].state == "cancelled"
        assert cards["weather__forecast"].state == "ok"
        assert app.query_one(EpisodeView).status == "cancelled"
        assert app.query_one(Timeline).state == "cancelled"
        assert not app.running
        episodes = list(read_episodes(app.history.current))
        assert [e.status for e in episodes] == ["cancelled"]
        await submit(pilot, "/mode react")
        await settle(pilot)
        assert app.agent_config.mode == "react"


async def test_policy_failure_is_a_notice_not_a_traceback(make_app):
    app = make_app([])  # the scripted policy has no turn: a ModelAPIError inside the episode
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "anything")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("no turn left" in m for m in messages)
        assert app.query_one(Timeline).state == "failed"
        assert not app.running

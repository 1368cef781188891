"""The conversation follows the newest output; scrolling up stops it (a marker shows new output)."""

from __future__ import annotations

import asyncio

import pytest

from tui.widgets import Conversation, Sidebar, Timeline, TurnView

from .conftest import NARROW, WIDE, GatedPolicy, answer, call, settle, submit, turn, visible
from .test_run import PARALLEL

FIVE_TURNS = [
    turn("explore", call("search_tools", query="weather"), think="Find a weather tool first."),
    turn(
        "execute", call("weather__forecast", city="Paris"), call("weather__forecast", city="Rome")
    ),
    turn("explore", call("search_tools", query="distance")),
    turn("execute", call("maps__distance", origin="Paris", destination="Rome")),
    answer("Paris 15 °C, Rome 12 °C; 1,420 km apart."),
]


def answer_turn(app) -> TurnView:
    return [view for view in app.query(TurnView) if view.phase == "answer"][-1]


@pytest.mark.parametrize(("size", "tasks"), [(NARROW, 1), (WIDE, 2)], ids=["80x24", "160x50"])
async def test_the_answer_of_a_five_turn_episode_is_in_view(make_app, size, tasks):
    app = make_app(FIVE_TURNS * tasks)
    async with app.run_test(size=size) as pilot:
        for number in range(tasks):
            await submit(pilot, f"Weather in Paris and Rome, and how far apart? ({number})")
            await settle(pilot)
        conversation = app.conversation
        assert conversation.max_scroll_y > 0  # the conversation is taller than the view
        assert conversation.scroll_y == conversation.max_scroll_y
        assert visible(answer_turn(app))
        assert conversation.following and not conversation.has_new_output


async def test_scrolled_up_the_view_stays_put_and_a_marker_announces_new_output(make_app):
    trains = turn("explore", call("search_tools", query="trains"), think="Look it up.")
    policy = GatedPolicy([*PARALLEL, trains, answer("no trains today")], hold=[3])
    app = make_app(policy)
    async with app.run_test(size=NARROW) as pilot:
        await submit(pilot, "Weather in Paris and Rome, and how far apart?")
        await settle(pilot)
        await submit(pilot, "and a train?")
        await asyncio.wait_for(policy.waiting.wait(), 10)
        await pilot.pause()
        conversation = app.conversation
        assert conversation.following
        await pilot.press("pageup")  # focus stays in the prompt
        await pilot.pause()
        assert app.focused is app.query_one("#prompt")
        held_at = conversation.scroll_y
        assert held_at < conversation.max_scroll_y and not conversation.following
        policy.release.set()
        await settle(pilot)
        assert conversation.scroll_y == held_at  # the user's place is kept
        assert conversation.has_new_output
        marker = conversation.marker
        assert "new output ↓" in str(marker.render())
        await pilot.press("end")  # the prompt is empty: End jumps to the newest output
        await pilot.pause()
        assert conversation.scroll_y == conversation.max_scroll_y
        assert not conversation.has_new_output and conversation.following
        assert visible(answer_turn(app))


async def test_the_marker_jumps_down_when_clicked(make_app):
    app = make_app(FIVE_TURNS)
    async with app.run_test(size=NARROW) as pilot:
        await submit(pilot, "Weather in Paris and Rome, and how far apart?")
        await settle(pilot)
        conversation = app.conversation
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert conversation.scroll_y == 0 and not conversation.following
        await conversation.add_note("late output")  # notes follow: a command's answer is shown
        assert conversation.following
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        conversation.mount(TurnView(99))  # any growth while scrolled up raises the marker
        await pilot.pause()
        await pilot.pause()
        assert conversation.has_new_output
        await pilot.click("#new-output")
        await pilot.pause()
        assert conversation.scroll_y == conversation.max_scroll_y
        assert not conversation.has_new_output


async def test_home_and_end_edit_a_typed_line_and_scroll_an_empty_one(make_app):
    app = make_app(FIVE_TURNS)
    async with app.run_test(size=NARROW) as pilot:
        await submit(pilot, "Weather in Paris and Rome, and how far apart?")
        await settle(pilot)
        conversation = app.conversation
        prompt = app.query_one("#prompt")
        await pilot.press(*"draft")
        await pilot.press("home")
        assert prompt.cursor_position == 0
        assert conversation.scroll_y == conversation.max_scroll_y  # Home moved the cursor only
        await pilot.press("pageup")
        await pilot.pause()
        assert conversation.scroll_y < conversation.max_scroll_y
        assert prompt.value == "draft" and app.focused is prompt
        await pilot.press("pagedown", "pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert conversation.scroll_y == conversation.max_scroll_y and conversation.following
        prompt.value = ""
        await pilot.press("home")
        await pilot.pause()
        assert conversation.scroll_y == 0


async def test_a_resumed_conversation_is_described_the_same_everywhere(make_app, tmp_path):
    history = tmp_path / "history"
    first = make_app([answer("Paris 15 °C"), *FIVE_TURNS], history_dir=history)
    async with first.run_test(size=NARROW) as pilot:
        await submit(pilot, "Weather in Paris?")
        await settle(pilot)
        await submit(pilot, "Weather in Paris and Rome, and how far apart?")
        await settle(pilot)
    app = make_app([], history_dir=history, resume=True)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        timeline = app.query_one(Timeline)
        assert timeline.state == "resumed"
        assert timeline.marks == [
            ("explore", 1),
            ("execute", 2),
            ("explore", 1),
            ("execute", 1),
            ("answer", 0),
        ]
        assert timeline.calls == 5
        line = str(timeline.render())
        assert "no task yet" not in line and "resumed 2 tasks" in line
        session = str(app.query_one(Sidebar).query_one("#session").render())
        assert "2 tasks, 5 calls" in session
        assert visible(answer_turn(app))
        assert isinstance(app.conversation, Conversation) and app.conversation.following

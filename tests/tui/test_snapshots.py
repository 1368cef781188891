"""SVG snapshots of the main screens at 80x24 and 160x50 (update with ``--snapshot-update``)."""

from __future__ import annotations

import asyncio

import pytest

from tui.widgets import ApprovalScreen

from .conftest import NARROW, WIDE, answer, call, settle, submit, turn
from .test_failures import MALFORMED
from .test_follow import FIVE_TURNS

SIZES = pytest.mark.parametrize("size", [NARROW, WIDE], ids=["80x24", "160x50"])


def steady(pilot) -> None:
    """A blinking cursor would make screenshots differ by the instant they are taken."""
    pilot.app.query_one("#prompt").cursor_blink = False


@SIZES
def test_start_screen_with_a_failed_source(snap_compare, make_app, broken_source, size):
    async def run_before(pilot) -> None:
        steady(pilot)
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(
        make_app([], extra_sources=[broken_source], show_timings=False),
        terminal_size=size,
        run_before=run_before,
    )


@SIZES
def test_five_turn_episode_answer_in_view(snap_compare, make_app, size):
    async def run_before(pilot) -> None:
        steady(pilot)
        await submit(pilot, "Weather in Paris and Rome, and how far apart?")
        await settle(pilot)
        await pilot.pause()

    assert snap_compare(
        make_app(FIVE_TURNS, show_timings=False), terminal_size=size, run_before=run_before
    )


@SIZES
def test_approval_dialog(snap_compare, make_app, size):
    async def run_before(pilot) -> None:
        steady(pilot)
        await submit(pilot, "delete the draft")
        for _ in range(100):
            await pilot.pause()
            if isinstance(pilot.app.screen, ApprovalScreen):
                break

    script = [turn("execute", call("files__delete", path="/tmp/draft.txt")), answer("deleted")]
    assert snap_compare(
        make_app(script, show_timings=False), terminal_size=size, run_before=run_before
    )


@SIZES
def test_format_error_turn(snap_compare, make_app, size):
    async def run_before(pilot) -> None:
        steady(pilot)
        await submit(pilot, "weather in Paris")
        await settle(pilot)

    assert snap_compare(
        make_app([MALFORMED, answer("Paris: 15 °C")], show_timings=False),
        terminal_size=size,
        run_before=run_before,
    )


@SIZES
def test_resumed_conversation(snap_compare, make_app, tmp_path, size):
    history = tmp_path / "history"

    async def run_before(pilot) -> None:
        steady(pilot)
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    async def first_run() -> None:
        app = make_app(FIVE_TURNS, history_dir=history, show_timings=False)
        async with app.run_test(size=size) as pilot:
            await submit(pilot, "Weather in Paris and Rome, and how far apart?")
            await settle(pilot)

    asyncio.run(first_run())
    assert snap_compare(
        make_app([], history_dir=history, resume=True, show_timings=False),
        terminal_size=size,
        run_before=run_before,
    )


@SIZES
def test_light_theme_help(snap_compare, make_app, size):
    async def run_before(pilot) -> None:
        steady(pilot)
        await settle(pilot)
        await submit(pilot, "/help")
        await settle(pilot)

    assert snap_compare(
        make_app([], dark=False, show_timings=False), terminal_size=size, run_before=run_before
    )

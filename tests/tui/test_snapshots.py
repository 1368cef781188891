"""SVG snapshots of the main screens at a fixed size (update with ``--snapshot-update``)."""

from __future__ import annotations

from tui.widgets import ApprovalScreen

from .conftest import answer, call, settle, submit, turn
from .test_run import PARALLEL

SNAPSHOT_SIZE = (130, 42)


def steady(pilot) -> None:
    """A blinking cursor would make screenshots differ by the instant they are taken."""
    pilot.app.query_one("#prompt").cursor_blink = False


def test_start_screen_with_a_failed_source(snap_compare, make_app, broken_source):
    async def run_before(pilot) -> None:
        steady(pilot)
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(
        make_app([], extra_sources=[broken_source], show_timings=False),
        terminal_size=SNAPSHOT_SIZE,
        run_before=run_before,
    )


def test_parallel_turn(snap_compare, make_app):
    async def run_before(pilot) -> None:
        steady(pilot)
        await submit(pilot, "Weather in Paris and Rome, and how far apart?")
        await settle(pilot)
        await pilot.pause()

    assert snap_compare(
        make_app(PARALLEL, show_timings=False), terminal_size=SNAPSHOT_SIZE, run_before=run_before
    )


def test_approval_dialog(snap_compare, make_app):
    async def run_before(pilot) -> None:
        steady(pilot)
        await submit(pilot, "delete the draft")
        for _ in range(100):
            await pilot.pause()
            if isinstance(pilot.app.screen, ApprovalScreen):
                break

    script = [turn("execute", call("files__delete", path="/tmp/draft.txt")), answer("deleted")]
    assert snap_compare(
        make_app(script, show_timings=False), terminal_size=SNAPSHOT_SIZE, run_before=run_before
    )


def test_light_theme_tools_listing(snap_compare, make_app):
    async def run_before(pilot) -> None:
        steady(pilot)
        await settle(pilot)
        await submit(pilot, "/tools forecast")
        await settle(pilot)

    assert snap_compare(
        make_app([], dark=False, show_timings=False),
        terminal_size=SNAPSHOT_SIZE,
        run_before=run_before,
    )

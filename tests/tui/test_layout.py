"""Layouts from 80x24 up: the sidebar collapses on narrow terminals, dialogs fit and show keys."""

from __future__ import annotations

from textual.widgets import Button

from tui.widgets import Sidebar

from .conftest import NARROW, WIDE, answer, call, settle, submit, turn
from .test_approval import _wait_for_dialog


async def test_the_sidebar_collapses_on_narrow_terminals_and_toggles(make_app):
    app = make_app([])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        sidebar = app.query_one(Sidebar)
        assert not sidebar.display
        assert app.conversation.region.width >= NARROW[0] - 2
        footer = {key.description: key.key for key in app.query("FooterKey")}
        assert footer.get("Sidebar") == "ctrl+b"  # the toggle is in the footer
        await pilot.press("ctrl+b")
        assert sidebar.display
        await pilot.press("ctrl+b")
        assert not sidebar.display
        await pilot.resize_terminal(*WIDE)
        await pilot.pause()
        assert sidebar.display
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not sidebar.display  # the user's choice holds while the width stays wide
        await pilot.resize_terminal(*NARROW)
        await pilot.resize_terminal(*WIDE)
        await pilot.pause()
        assert sidebar.display


async def test_the_approval_dialog_fits_80x24_with_its_keys_on_the_buttons(make_app, deleted):
    script = [turn("execute", call("files__delete", path="/tmp/draft.txt")), answer("deleted")]
    app = make_app(script)
    async with app.run_test(size=NARROW) as pilot:
        await submit(pilot, "delete the draft")
        dialog = await _wait_for_dialog(pilot)
        await pilot.pause()
        screen = dialog.region
        buttons = list(dialog.query(Button))
        labels = [str(button.label) for button in buttons]
        assert labels == ["Allow once (o)", "This session (s)", "Always (a)", "Deny (d)"]
        for button in buttons:
            assert screen.contains_region(button.region), button.id
            assert button.region.width >= len(str(button.label)) + 2, button.id
        await pilot.press("s")
        await settle(pilot)
        assert deleted.paths == ["/tmp/draft.txt"]
        assert app.gate.rules.session_tools

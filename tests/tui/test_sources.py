"""The sidebar's sources (failed, reconnecting) and MCP elicitation through a dialog."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel
from textual.widgets import Button

from paraagent_runtime.errors import MCPConnectionError
from paraagent_runtime.mcp.config import MCPServerConfig
from paraagent_runtime.mcp.source import MCPToolSource, ReconnectPolicy
from tui.widgets import ApprovalScreen, CallCard, ElicitationScreen, Sidebar

from .conftest import NARROW, SIZE, answer, call, settle, submit, turn


async def test_a_failing_source_is_shown_as_failed(make_app, broken_source):
    app = make_app([], extra_sources=[broken_source])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = {row.name: row for row in app.source_rows()}
        assert rows["ghost"].status == "failed" and rows["ghost"].error
        assert rows["weather"].status == "ready" and rows["weather"].tools == 1
        assert rows["files"].tools == 2
        shown = str(app.query_one(Sidebar).query_one("#sources").render())
        assert "ghost" in shown and "failed" in shown
        assert any("ghost failed" in n.message for n in app._notifications)
        await submit(pilot, "/servers")
        await settle(pilot)
        assert "failed" in app.conversation.query(".note").last().source


ONE_LIFE_SERVER = """
import os, runpy, sys
marker, demo = sys.argv[1], sys.argv[2]
if os.path.exists(marker):
    sys.exit(3)
open(marker, "w").close()
runpy.run_path(demo, run_name="__main__")
"""


async def test_a_source_whose_server_died_shows_as_reconnecting(make_app, tmp_path):
    """A real stdio server that starts once: after it is killed, reconnecting fails."""
    demo = Path(__file__).parents[1] / "runtime" / "mcp" / "demo_server.py"
    config = MCPServerConfig(
        type="stdio",
        command=sys.executable,
        args=["-c", ONE_LIFE_SERVER, str(tmp_path / "started"), str(demo)],
        timeout=10.0,
    )
    now = [0.0]
    backoff = ReconnectPolicy(initial_backoff_s=2, clock=lambda: now[0])
    source = MCPToolSource("demo", config, reconnect=backoff)
    app = make_app([], extra_sources=[source])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert {row.name: row.status for row in app.source_rows()}["demo"] == "connected"
        os.kill((await source.call_tool("pid", {}))["result"], signal.SIGKILL)
        for _ in range(2):  # the dead session, then the failed reconnection
            with contextlib.suppress(MCPConnectionError):
                await source.call_tool("echo", {"text": "hi"})
        row = {row.name: row for row in app.source_rows()}["demo"]
        assert row.status == "reconnecting" and "next attempt in" in (row.error or "")
        await submit(pilot, "/servers")
        await settle(pilot)
        shown = str(app.query_one(Sidebar).query_one("#sources").render())
        assert "reconnecting" in shown and "next attempt in 2s" in shown
        now[0] += 2  # the backoff has passed: the next call would retry
        row = {row.name: row for row in app.source_rows()}["demo"]
        assert row.status == "reconnecting" and (row.error or "").endswith("retries on next use")


class Contact(BaseModel):
    email: str
    newsletter: bool = False


def survey_server() -> MCPServer:
    server = MCPServer("survey")

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user for an email address."""
        reply = await ctx.elicit("Which email?", Contact)
        data = getattr(reply, "data", None)
        return f"{reply.action}:{data.email if data else ''}:{data.newsletter if data else ''}"

    return server


async def _approve(pilot) -> None:
    """MCP tools without annotations count as destructive (the MCP default): allow once."""
    for _ in range(200):
        await pilot.pause()
        if isinstance(pilot.app.screen, ApprovalScreen):
            await pilot.press("o")
            return
    raise AssertionError("no approval dialog")


async def test_elicitation_is_answered_in_a_dialog(make_app):
    source = MCPToolSource(
        "survey",
        # The call waits for the dialog: on a loaded machine that can take more than 10 s.
        MCPServerConfig(type="memory", protocol="legacy", timeout=60.0),
        server=survey_server(),
    )
    app = make_app([turn("execute", call("survey__ask")), answer("ok")], extra_sources=[source])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert {row.name: row.status for row in app.source_rows()}["survey"] == "connected"
        await submit(pilot, "ask me")
        await _approve(pilot)
        for _ in range(200):
            await pilot.pause()
            if isinstance(app.screen, ElicitationScreen):
                break
        assert isinstance(app.screen, ElicitationScreen)
        assert app.screen.request.message == "Which email?"
        app.screen.query_one("#field-email").value = "a@b.c"
        await pilot.click("#field-newsletter")
        await pilot.click("#accept")
        await settle(pilot)
        card = next(c for c in app.query(CallCard) if c.call.name == "survey__ask")
        assert card.state == "ok", card.result.error
        assert card.result.content == {"result": "accept:a@b.c:True"}


async def test_a_declined_elicitation_reaches_the_server(make_app):
    source = MCPToolSource(
        "survey",
        # The call waits for the dialog: on a loaded machine that can take more than 10 s.
        MCPServerConfig(type="memory", protocol="legacy", timeout=60.0),
        server=survey_server(),
    )
    app = make_app([turn("execute", call("survey__ask")), answer("ok")], extra_sources=[source])
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await submit(pilot, "ask me")
        await _approve(pilot)
        for _ in range(200):
            await pilot.pause()
            if isinstance(app.screen, ElicitationScreen):
                break
        await pilot.pause()
        for button in app.screen.query(Button):  # the dialog fits 80x24
            assert app.screen.region.contains_region(button.region), button.id
        await pilot.click("#decline")
        await settle(pilot)
        card = next(c for c in app.query(CallCard) if c.call.name == "survey__ask")
        assert card.result.content == {"result": "decline::"}

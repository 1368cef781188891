"""The live turn status while the policy thinks: spinner, elapsed time, tokens streamed."""

from __future__ import annotations

import asyncio
import re

from tui.widgets import SPINNER, Timeline

from .conftest import SIZE, GatedPolicy, answer, call, settle, submit, turn

THINKING = "<think>" + " ".join(f"step{i}" for i in range(12)) + "</think>"


async def test_the_status_ticks_while_the_policy_thinks(make_app):
    policy = GatedPolicy([THINKING + answer("done")], hold=[0])
    app = make_app(policy)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "think hard")
        await asyncio.wait_for(policy.waiting.wait(), 10)
        await pilot.pause()
        timeline = app.query_one(Timeline)
        first = str(timeline.render()).splitlines()[0]
        assert first[0] in SPINNER
        assert "turn 1 thinking" in first and "12 tokens streamed" in first
        assert "Esc cancels" in first
        assert re.search(r" · \d+\.\d s · ", first)  # the seconds spent on the turn so far
        await pilot.pause(0.35)
        later = str(timeline.render()).splitlines()[0]
        assert later != first  # the spinner and the clock moved while nothing streamed
        policy.release.set()
        await settle(pilot)
        done = str(timeline.render())
        assert timeline.state == "done" and "Esc cancels" not in done
        assert done.startswith("Answer")


async def test_the_status_names_the_calls_a_turn_waits_for(make_app, hang):
    app = make_app([turn("execute", call("files__wait"), call("weather__forecast", city="Oslo"))])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait for the file")
        await asyncio.wait_for(hang.started.wait(), 10)
        await pilot.pause()
        status = str(app.query_one(Timeline).render()).splitlines()[0]
        assert "turn 1 running 2 calls" in status
        await pilot.press("escape")
        await settle(pilot)
        assert str(app.query_one(Timeline).render()).startswith("⊘ cancelled")

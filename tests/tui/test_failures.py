"""Failures show where they happen: format errors and typed tool errors in their turn."""

from __future__ import annotations

from paraagent_runtime.agent import AgentConfig
from paraagent_runtime.dispatch import DispatchConfig
from tui.widgets import CallCard, EpisodeView, Timeline, TurnView

from .conftest import SIZE, answer, call, settle, submit, turn

MALFORMED = (
    "<phase>wander</phase>"
    '<tool_call>{"name": "weather__forecast", "arguments": {"city": "Paris"</tool_call>'
)


def shown(widget) -> str:
    return "\n".join(str(static.render()) for static in widget.query("Static"))


async def test_a_malformed_turn_shows_its_format_errors(make_app, tmp_path):
    history = tmp_path / "history"
    app = make_app([MALFORMED, answer("sorry")], history_dir=history)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "weather in Paris")
        await settle(pilot)
        bad = app.query(TurnView).first()
        assert bad.phase == "format-error"
        errors = str(bad.query_one(".format-errors").render())
        assert 'unknown_phase: unknown phase "wander"' in errors
        assert "malformed_json: tool call #1 is not valid JSON" in errors
        assert '{"name": "weather__forecast"' in errors  # the offending fragment
        assert app.query_one(Timeline).marks == [("format", 0), ("answer", 0)]
        assert "✗format ▸ Answer" in str(app.query_one(Timeline).render())
    resumed = make_app([], history_dir=history, resume=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        again = resumed.query(TurnView).first()
        assert again.phase == "format-error"
        assert str(again.query_one(".format-errors").render()) == errors
        assert resumed.query_one(Timeline).marks == [("format", 0), ("answer", 0)]


async def test_typed_tool_errors_appear_on_their_calls(make_app):
    script = [
        turn(
            "execute",
            call("nowhere__teleport", city="Paris"),
            call("weather__forecast", town="Paris"),
            call("files__wait", seconds=30),
            call("weather__forecast", city="Oslo"),
        ),
        answer("partly"),
    ]
    config = AgentConfig(max_turns=4, dispatch=DispatchConfig(call_timeout_s=0.3))
    app = make_app(script, agent_config=config)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "try everything")
        await settle(pilot)
        cards = list(app.query(CallCard))
        kinds = ["unknown_tool", "invalid_arguments", "timeout", None]
        for card, kind in zip(cards, kinds, strict=True):
            header = str(card.query_one(".call-header").render())
            if kind is None:
                assert card.state == "ok" and "✓ weather__forecast" in header
                continue
            assert card.state == "error" and f"✗ {card.call.name}" in header, header
            assert header.endswith(kind), header
            assert card.result.error in str(card.query_one(".call-error").render())
        assert "no result within 0.3 s" in cards[2].result.error


async def test_react_mode_shows_act_turns_never_none(make_app):
    script = [
        call("weather__forecast", city="Paris") + call("weather__forecast", city="Rome"),
        answer("Paris 15, Rome 12"),
    ]
    app = make_app(script, agent_config=AgentConfig(mode="react", max_turns=4))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "weather in Paris and Rome")
        await settle(pilot)
        acting = app.query(TurnView).first()
        assert acting.phase == "act"
        timeline = str(app.query_one(Timeline).render())
        assert "A×2 ▸ Answer" in timeline
        text = shown(app.screen) + timeline
        assert "None" not in text


async def test_a_failed_episode_shows_its_cause_in_place(make_app):
    app = make_app([turn("execute", call("weather__forecast", city="Oslo"))])  # then no turn left
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "weather in Oslo")
        await settle(pilot)
        view = app.query_one(EpisodeView)
        cause = str(view.query_one(".episode-error").render())
        assert cause.startswith("error: the scripted policy has no turn left")
        assert "ended: error" in str(view.query_one(".episode-status").render())
        assert str(app.query_one(Timeline).render()).startswith("✗ failed  X×1")

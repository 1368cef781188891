"""History: conversations persist as JSONL, survive restarts, and resume with /load."""

from __future__ import annotations

import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.trajectory import read_episodes
from tui.history import ChatHistory, default_history_dir
from tui.widgets import CallCard, EpisodeView, TurnView

from .conftest import SIZE, answer, call, settle, submit, turn

SCRIPT = [
    turn(
        "execute", call("weather__forecast", city="Paris"), call("weather__forecast", city="Rome")
    ),
    answer("Paris 15, Rome 12"),
    turn("execute", call("maps__distance", origin="Paris", destination="Rome")),
    answer("1,420 km"),
]


async def test_history_survives_a_restart_and_resumes(make_app, tmp_path):
    history = tmp_path / "history"
    app = make_app(SCRIPT, history_dir=history)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "weather in Paris and Rome?")
        await settle(pilot)
        await submit(pilot, "and how far apart?")
        await settle(pilot)
        first_file = app.history.current
        # the follow-up saw the first exchange as context
        assert "weather in Paris and Rome?" in app.policy.calls[2][0].content
        assert "Paris 15, Rome 12" in app.policy.calls[2][0].content
    assert [e.answer for e in read_episodes(first_file)] == ["Paris 15, Rome 12", "1,420 km"]

    again = make_app([answer("still here")], history_dir=history)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not list(again.query(EpisodeView))
        await submit(pilot, "/load")
        await settle(pilot)
        views = list(again.query(EpisodeView))
        assert [v.request for v in views] == ["weather in Paris and Rome?", "and how far apart?"]
        cards = list(views[0].query(CallCard))
        assert [c.state for c in cards] == ["ok", "ok"]
        assert [t.phase for t in views[0].query(TurnView)] == ["execute", "answer"]
        assert again.history.current == first_file
        assert len(again.exchanges) == 2
        await submit(pilot, "anything else?")
        await settle(pilot)
    assert [e.answer for e in read_episodes(first_file)] == [
        "Paris 15, Rome 12",
        "1,420 km",
        "still here",
    ]


async def test_resume_on_start_and_save_elsewhere(make_app, tmp_path):
    history = tmp_path / "history"
    app = make_app(SCRIPT[:2], history_dir=history)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "weather?")
        await settle(pilot)
        export = tmp_path / "exported" / "chat.jsonl"
        await submit(pilot, f"/save {export}")
        await settle(pilot)
    assert [e.task for e in read_episodes(export)] == ["weather?"]

    resumed = make_app([], history_dir=history, resume=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert [v.request for v in resumed.query(EpisodeView)] == ["weather?"]

    other = make_app([], history_dir=tmp_path / "elsewhere")
    async with other.run_test(size=SIZE) as pilot:
        await submit(pilot, f"/load {export}")
        await settle(pilot)
        assert [v.request for v in other.query(EpisodeView)] == ["weather?"]
        # a file from outside the history directory is copied into a new conversation file
        assert other.history.current.parent == tmp_path / "elsewhere"
        assert [e.task for e in read_episodes(other.history.current)] == ["weather?"]


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("/load /no/such/file.jsonl", "no conversation file"),
        ("/load", "no saved conversations"),
        ("/save", "nothing to save"),
        ("/save {tmp}/out.jsonl", "nothing to save"),
    ],
)
async def test_bad_history_commands_are_notices(make_app, tmp_path, command, message):
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, command.format(tmp=tmp_path))
        await settle(pilot)
        assert any(message in n.message for n in app._notifications)


async def test_a_file_without_episodes_is_rejected(make_app, tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"not": "an episode"}\n')
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, f"/load {junk}")
        await settle(pilot)
        assert any("holds no episode" in n.message for n in app._notifications)


def test_default_history_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_history_dir() == tmp_path / "paraagent" / "history"


def test_sessions_are_newest_first(tmp_path):
    history = ChatHistory(tmp_path)
    assert history.sessions() == []
    with pytest.raises(ConfigError):
        history.resolve(None)

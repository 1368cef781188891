"""Slash commands, the command palette entries, themes and the sidebar toggle."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

from paraagent_runtime.errors import UserError
from paraagent_runtime.policy import SPEC_PREFIXES
from paraagent_runtime.policy.scripted import ScriptedPolicy
from tui.commands import SLASH_COMMANDS, help_markdown, parse_slash
from tui.widgets import EpisodeView, Sidebar

from .conftest import SIZE, answer, settle, submit


def last_note(app) -> str:
    return app.conversation.query(".note").last().source


async def test_help_tools_mode_and_model(make_app):
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await submit(pilot, "/help")
        await settle(pilot)
        assert all(f"/{name}" in last_note(app) for name in SLASH_COMMANDS)
        await submit(pilot, "/tools")
        await settle(pilot)
        assert "4 tools" in last_note(app) and "**files** (2): delete, wait" in last_note(app)
        await submit(pilot, "/tools forecast weather")
        await settle(pilot)
        assert "| `forecast` |" in last_note(app)
        await submit(pilot, "/tools zzzqqq")
        await settle(pilot)
        assert "no tool matches" in last_note(app)
        await submit(pilot, "/mode")
        await settle(pilot)
        assert "paraact" in last_note(app)
        await submit(pilot, "/mode decoupled")
        await settle(pilot)
        assert app.agent_config.mode == "decoupled"
        assert "decoupled" in str(app.query_one("#session").render())
        await submit(pilot, "/model")
        await settle(pilot)
        assert "scripted" in last_note(app)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("/mode turbo", "unknown mode 'turbo'"),
        ("/tols", "Did you mean /tools"),
        ("/frobnicate", "unknown command /frobnicate"),
        ("/model gpt-9", "unknown policy spec 'gpt-9'"),
        ("/model local:no/such/dir", "never downloads models"),
    ],
)
async def test_bad_commands_are_notices(make_app, command, message):
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, command)
        await settle(pilot)
        assert any(message in n.message for n in app._notifications)
        assert app.agent_config.mode == "paraact"


async def test_model_switch_uses_the_factory(make_app):
    built: list[str] = []

    def factory(name: str) -> ScriptedPolicy:
        built.append(name)
        return ScriptedPolicy([answer("from the new model")], model=name)

    app = make_app([], policy_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/model other")
        await settle(pilot)
        assert built == ["other"]
        await submit(pilot, "hello")
        await settle(pilot)
        assert app.exchanges == [("hello", "from the new model")]


async def test_clear_starts_a_new_conversation(make_app):
    app = make_app([answer("one")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "first")
        await settle(pilot)
        first = app.history.current
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert not list(app.query(EpisodeView)) and app.exchanges == []
        assert app.history.current is None and first.exists()


async def test_palette_theme_and_sidebar(make_app):
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert {"Mode: react", "/tools", "/servers", "Cancel running task"} <= set(titles)
        react = next(c for c in app.get_system_commands(app.screen) if c.title == "Mode: react")
        react.callback()
        await settle(pilot)
        assert app.agent_config.mode == "react"
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("ctrl+b")
        assert not app.query_one(Sidebar).display
        await pilot.press("escape")
        await pilot.pause()
        assert any("nothing is running" in n.message for n in app._notifications)


async def test_a_second_task_waits_for_the_running_one(make_app, hang):
    from .conftest import call, turn

    app = make_app([turn("execute", call("files__wait")), answer("x")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait")
        await hang.started.wait()
        await submit(pilot, "another")
        assert any("a task is running" in n.message for n in app._notifications)
        await pilot.press("escape")
        await settle(pilot)
        assert len(list(app.query(EpisodeView))) == 1


def test_parse_slash():
    assert parse_slash("/tools  weather now ").argument == "weather now"
    assert parse_slash("/MODE react").name == "mode"
    with pytest.raises(UserError, match="unknown command"):
        parse_slash("/")


def test_help_rows_keep_their_descriptions_whatever_their_pipes():
    tokens = MarkdownIt("gfm-like").parse(help_markdown([("ctrl+b", "Sidebar")]))
    rows: list[list[str]] = []
    for previous, token in zip(tokens, tokens[1:], strict=False):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and previous.type in ("td_open", "th_open"):
            rows[-1].append("".join(child.content for child in token.children or []))
    commands = {row[0]: row[1:] for row in rows if row[0].startswith("/")}
    assert len(commands) == len(SLASH_COMMANDS)
    assert all(len(cells) == 1 and cells[0] for cells in commands.values())
    assert commands["/mode paraact|react|decoupled"] == ["show or switch the agent mode"]
    assert all(spec in commands["/model [spec]"][0] for spec in SPEC_PREFIXES)


@pytest.mark.parametrize("spec", ["paraagent", "local", "onnx:paraagent", "transformers:"])
async def test_model_takes_the_policy_specs(make_app, spec):
    built: dict[str, ScriptedPolicy] = {}

    def factory(name: str) -> ScriptedPolicy:
        built[name] = ScriptedPolicy([], model=name)
        return built[name]

    app = make_app([], policy_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, f"/model {spec}")
        await settle(pilot)
        assert list(built) == [spec] and app.policy is built[spec]


@pytest.mark.parametrize(
    "spec", ["local:HuggingFaceTB/SmolLM2-360M", "transformers:Qwen/Qwen3-4B", "vllm:x/y"]
)
async def test_model_never_downloads(make_app, spec):
    built: list[str] = []
    app = make_app([], policy_factory=built.append)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, f"/model {spec}")
        await settle(pilot)
        assert built == []
        assert app.policy.name == "scripted"
        messages = [n.message for n in app._notifications]
        assert any("never downloads models" in m for m in messages)
        assert not any("loading" in m for m in messages)


async def test_model_default_factory_is_policy_from_spec(make_app, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    script = tmp_path / "turns.jsonl"
    script.write_text(json.dumps(answer("from the file")) + "\n", encoding="utf-8")
    directory = tmp_path / "model"
    directory.mkdir()
    app = make_app([])
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "/model openai:gpt-x")
        await settle(pilot)
        assert any("needs a server" in n.message for n in app._notifications)
        await submit(pilot, f"/model local:{directory}")
        await settle(pilot)  # the model is loaded by /model, so its error comes now
        assert any("no config.json" in n.message for n in app._notifications)
        await submit(pilot, "/model gpt-9")
        await settle(pilot)
        note = str(app.conversation.query(".note").last().render())
        assert note.startswith("error: unknown policy spec 'gpt-9'")  # in full, as plain text
        assert all(f"{spec} ({what})" in note for spec, what in SPEC_PREFIXES.items())
        toast = list(app._notifications)[-1]
        assert toast.message.startswith("unknown policy spec 'gpt-9'")
        assert toast.message.endswith("(details in the conversation)")
        assert app.policy.name == "scripted"
        await submit(pilot, f"/model scripted:{script}")
        await settle(pilot)
        await submit(pilot, "hello")
        await settle(pilot)
        assert app.exchanges == [("hello", "from the file")]


async def test_a_start_notice_is_shown_in_full(make_app) -> None:
    notice = "the default policy is a 135M demo model; --policy openai:MODEL for a capable one"
    app = make_app([], notice=notice)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert any(n.message == notice for n in app._notifications)

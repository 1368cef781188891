"""Approvals before destructive tools: the dialog, its scopes, and the persisted rules."""

from __future__ import annotations

import json

import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.tools import ToolAnnotations
from paraagent_runtime.toolspace import Toolspace
from tui.approval import ApprovalDecision, ApprovalGate, ApprovalRules, install_approvals
from tui.widgets import ApprovalScreen, CallCard

from .conftest import SIZE, answer, call, settle, submit, turn

DELETE_TWICE = [
    turn("execute", call("files__delete", path="/tmp/a"), call("weather__forecast", city="Oslo")),
    turn("execute", call("files__delete", path="/tmp/b")),
    answer("done"),
]


async def _wait_for_dialog(pilot) -> ApprovalScreen:
    for _ in range(100):
        await pilot.pause()
        if isinstance(pilot.app.screen, ApprovalScreen):
            return pilot.app.screen
    raise AssertionError("no approval dialog appeared")


async def test_allow_once_then_deny(make_app, deleted):
    app = make_app(DELETE_TWICE)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "delete a and b")
        dialog = await _wait_for_dialog(pilot)
        assert dialog.request.spec.name == "delete"
        assert dialog.request.arguments == {"path": "/tmp/a"}
        await pilot.press("o")
        await _wait_for_dialog(pilot)
        await pilot.click("#deny")
        await settle(pilot)
        assert deleted.paths == ["/tmp/a"]
        cards = [c for c in app.query(CallCard) if c.call.name == "files__delete"]
        assert [c.state for c in cards] == ["ok", "error"]
        assert cards[0].destructive and "did not allow" in cards[1].result.error
        assert not app.gate.rules.session_tools and not app.gate.rules.always_tools


async def test_allow_for_the_session_asks_once(make_app, deleted):
    app = make_app(DELETE_TWICE)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "delete a and b")
        await _wait_for_dialog(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert deleted.paths == ["/tmp/a", "/tmp/b"]
        assert app.gate.rules.session_tools == {"files/delete"}
        assert not app.gate.rules.path.exists()


async def test_always_for_the_source_persists_across_restarts(make_app, deleted, tmp_path):
    approvals = tmp_path / "approvals.json"
    app = make_app(DELETE_TWICE, approvals_path=approvals)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "delete a and b")
        await _wait_for_dialog(pilot)
        await pilot.click("#whole-source")
        await pilot.press("a")
        await settle(pilot)
    assert json.loads(approvals.read_text()) == {"tools": [], "sources": ["files"]}
    again = make_app(DELETE_TWICE, approvals_path=approvals)
    async with again.run_test(size=SIZE) as pilot:
        await submit(pilot, "delete a and b again")
        await settle(pilot)
        assert not isinstance(again.screen, ApprovalScreen)
    assert deleted.paths == ["/tmp/a", "/tmp/b", "/tmp/a", "/tmp/b"]


async def test_a_corrupt_approvals_file_is_a_notice_and_asks_again(make_app, tmp_path):
    approvals = tmp_path / "approvals.json"
    approvals.write_text("{not json")
    app = make_app(DELETE_TWICE[1:], approvals_path=approvals)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert any("approvals file" in n.message for n in app._notifications)
        await submit(pilot, "delete b")
        await _wait_for_dialog(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert [c.state for c in app.query(CallCard)] == ["error"]


def _delete_source(log: list[str]) -> FunctionToolSource:
    async def delete(path: str) -> str:
        log.append(path)
        return path

    return FunctionToolSource(
        "files", [FunctionTool(delete, annotations=ToolAnnotations(destructive=True))]
    )


async def test_the_wrapper_denies_without_an_approver_and_keeps_names():
    log: list[str] = []
    toolspace = Toolspace([_delete_source(log)])
    gate = ApprovalGate(ApprovalRules())
    install_approvals(toolspace, gate)
    install_approvals(toolspace, gate)  # idempotent: no double wrapping
    await toolspace.refresh()
    assert list(toolspace.tools) == ["delete"]
    assert type(toolspace.sources["files"]).__name__ == "ApprovalToolSource"
    assert type(toolspace.sources["files"].inner).__name__ == "FunctionToolSource"
    with pytest.raises(Exception, match="did not allow delete"):
        await toolspace.call("files__delete", {"path": "x"})
    assert log == []


async def test_decisions_taken_ahead_are_used_once():
    log: list[str] = []
    toolspace = Toolspace([_delete_source(log)])
    answers = [ApprovalDecision(allow=True), ApprovalDecision(allow=False)]
    asked = []

    async def approver(request):
        asked.append(request.arguments)
        return answers.pop(0)

    gate = ApprovalGate(ApprovalRules(), approver)
    install_approvals(toolspace, gate)
    await toolspace.refresh()
    spec = toolspace.get("files__delete")
    await gate.decide_ahead([(spec, {"path": "a"}), (spec, {"path": "b"})])
    assert asked == [{"path": "a"}, {"path": "b"}]
    assert await toolspace.call("files__delete", {"path": "a"}) == "a"
    with pytest.raises(Exception, match="did not allow"):
        await toolspace.call("files__delete", {"path": "b"})
    assert log == ["a"]


def test_rules_reject_a_file_of_the_wrong_shape(tmp_path):
    path = tmp_path / "approvals.json"
    path.write_text(json.dumps({"tools": [1, 2]}))
    with pytest.raises(ConfigError, match="approvals file"):
        ApprovalRules(path).load()
    path.write_text(json.dumps(["files"]))
    with pytest.raises(ConfigError, match="approvals file"):
        ApprovalRules(path).load()

"""ScriptedPolicy.

Replays turns in order, records calls, streams, and fails loudly when exhausted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paraagent_runtime.errors import ConfigError, ModelAPIError
from paraagent_runtime.policy import Completion, Message, ScriptedPolicy

USER = [Message(role="user", content="hi")]


async def test_replays_turns_in_order_and_records_calls() -> None:
    policy = ScriptedPolicy(["first", "second"])
    first = await policy.complete(USER, tools=[{"type": "function", "function": {"name": "t"}}])
    second = await policy.complete([*USER, Message(role="assistant", content="first")])
    assert (first.text, second.text) == ("first", "second")
    assert first.finish_reason == "stop" and first.model == "scripted"
    assert [len(call) for call in policy.calls] == [1, 2]
    assert policy.tools_seen[0] == [{"type": "function", "function": {"name": "t"}}]
    assert policy.tools_seen[1] is None
    assert policy.remaining == 0


async def test_exhausted_script_raises_model_api_error() -> None:
    policy = ScriptedPolicy(["only"])
    await policy.complete(USER)
    with pytest.raises(ModelAPIError, match="no turn left"):
        await policy.complete(USER)


async def test_recorded_messages_are_copies() -> None:
    policy = ScriptedPolicy(["ok"])
    messages = [Message(role="user", content="original")]
    await policy.complete(messages)
    messages[0].content = "changed"
    assert policy.calls[0][0].content == "original"


async def test_function_script_sees_the_conversation() -> None:
    policy = ScriptedPolicy(lambda messages: f"echo {messages[-1].content}")
    completion = await policy.complete(USER)
    assert completion.text == "echo hi"
    assert policy.remaining is None


async def test_async_function_may_return_a_completion_with_tool_calls() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "search_tools", "arguments": "{}"}}

    async def script(messages: list[Message]) -> Completion:
        return Completion(text="", tool_calls=[call])

    completion = await ScriptedPolicy(script).complete(USER)
    assert completion.tool_calls == [call]
    assert completion.finish_reason == "tool_calls"


@pytest.mark.parametrize("bad", [lambda m: 42, lambda m: 1 / 0])
async def test_broken_function_raises_model_api_error(bad) -> None:
    with pytest.raises(ModelAPIError, match="script function"):
        await ScriptedPolicy(bad).complete(USER)


async def test_streams_chunks_that_add_up_to_the_text() -> None:
    text = "<answer>" + "x" * 40 + "</answer>"
    chunks: list[str] = []

    async def on_text(delta: str) -> None:
        chunks.append(delta)

    completion = await ScriptedPolicy([text], chunk_size=7).complete(USER, on_text=on_text)
    assert "".join(chunks) == completion.text == text
    assert len(chunks) == -(-len(text) // 7)


def test_rejects_a_single_string_and_bad_chunk_size() -> None:
    with pytest.raises(ConfigError, match="list of turns"):
        ScriptedPolicy("not a list")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="chunk_size"):
        ScriptedPolicy(["x"], chunk_size=0)


async def test_from_jsonl_reads_strings_and_completions(tmp_path: Path) -> None:
    script = tmp_path / "turns.jsonl"
    script.write_text(
        json.dumps("<answer>a</answer>")
        + "\n\n"
        + json.dumps({"text": "b", "finish_reason": "length"})
        + "\n"
    )
    policy = ScriptedPolicy.from_jsonl(script)
    assert (await policy.complete(USER)).text == "<answer>a</answer>"
    second = await policy.complete(USER)
    assert (second.text, second.finish_reason) == ("b", "length")


def test_from_jsonl_errors_name_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        ScriptedPolicy.from_jsonl(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"ok"\n{not json\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:2"):
        ScriptedPolicy.from_jsonl(bad)
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("[1, 2]\n")
    with pytest.raises(ConfigError, match=r"wrong.jsonl:1"):
        ScriptedPolicy.from_jsonl(wrong)


async def test_policy_is_an_async_context_manager() -> None:
    async with ScriptedPolicy(["ok"]) as policy:
        assert (await policy.complete(USER)).text == "ok"

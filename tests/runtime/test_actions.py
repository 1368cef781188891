"""The ParaAct grammar: parsing never raises, rendering round-trips, bad turns are typed errors."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from paraagent_runtime.actions import (
    FormatErrorKind,
    Turn,
    infer_phase,
    parse_observations,
    parse_turn,
    render_observations,
    render_turn,
    turn_from_openai,
)
from paraagent_runtime.tools import ToolCall, ToolErrorKind, ToolResult

TAGS = [
    "<think>",
    "</think>",
    "<phase>",
    "</phase>",
    "<tool_call>",
    "</tool_call>",
    "<answer>",
    "</answer>",
    "{",
    "}",
    '"name"',
    ":",
    '"arguments"',
]


def kinds(turn: Turn) -> set[FormatErrorKind]:
    return {error.kind for error in turn.errors}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parse_never_raises_on_any_text(text: str) -> None:
    for strict in (False, True):
        turn = parse_turn(text, strict=strict)
        assert isinstance(turn, Turn)
        assert turn.text == text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(TAGS), st.text(max_size=8)), max_size=30).map("".join))
def test_parse_never_raises_on_tag_soup(text: str) -> None:
    turn = parse_turn(text)
    assert not (turn.calls and turn.answer is not None)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,20}", fullmatch=True)
plain_text = st.text(max_size=40).filter(lambda s: "<" not in s and s == s.strip())


@st.composite
def turns(draw: st.DrawFn) -> Turn:
    think = draw(st.none() | plain_text)
    if draw(st.booleans()):
        calls = [
            ToolCall(
                id=f"call_{i}",
                name=draw(names),
                arguments=draw(st.dictionaries(st.text(max_size=8), json_values, max_size=4)),
            )
            for i in range(draw(st.integers(1, 5)))
        ]
        phase = infer_phase(calls)
        return Turn(think=think, phase=phase, calls=calls)
    return Turn(think=think, answer=draw(plain_text))


@settings(max_examples=200, deadline=None)
@given(turns())
def test_render_then_parse_round_trips(turn: Turn) -> None:
    parsed = parse_turn(render_turn(turn), strict=True)
    assert parsed.valid, parsed.errors
    assert parsed.calls == turn.calls
    assert parsed.answer == turn.answer
    assert parsed.think == turn.think
    assert parsed.phase == turn.phase


def test_parallel_explore_turn() -> None:
    text = (
        "<think>two needs</think>\n<phase>explore</phase>\n"
        '<tool_call>{"name": "search_tools", '
        '"arguments": {"query": "flight status", "top_k": 5}}</tool_call>\n'
        '<tool_call>{"name": "search_tools", "arguments": {"query": "airport weather"}}</tool_call>'
    )
    turn = parse_turn(text, strict=True)
    assert turn.valid
    assert turn.phase == "explore" and not turn.phase_inferred
    assert [call.arguments["query"] for call in turn.calls] == ["flight status", "airport weather"]
    assert [call.id for call in turn.calls] == ["call_0", "call_1"]


def test_missing_phase_is_inferred() -> None:
    meta = parse_turn('<tool_call>{"name": "inspect_tool", "arguments": {"name": "x"}}</tool_call>')
    assert (meta.phase, meta.phase_inferred) == ("explore", True)
    mixed = parse_turn(
        '<tool_call>{"name": "search_tools", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "w__f", "arguments": {}}</tool_call>'
    )
    assert (mixed.phase, mixed.phase_inferred) == ("execute", True)


def test_malformed_and_truncated_json_are_typed_errors() -> None:
    turn = parse_turn(
        '<tool_call>{"name": "a", "arguments": {"x": 1}</tool_call><tool_call>{"name": "b"'
    )
    assert FormatErrorKind.MALFORMED_JSON in kinds(turn)
    assert FormatErrorKind.TRUNCATED in kinds(turn)
    assert turn.calls == []


def test_unknown_phase_and_mismatch() -> None:
    unknown = parse_turn(
        '<phase>plan</phase><tool_call>{"name": "w__f", "arguments": {}}</tool_call>'
    )
    assert FormatErrorKind.UNKNOWN_PHASE in kinds(unknown)
    assert unknown.phase == "execute" and unknown.phase_inferred
    mismatch = parse_turn(
        '<phase>explore</phase><tool_call>{"name": "w__f", "arguments": {}}</tool_call>'
    )
    assert FormatErrorKind.PHASE_MISMATCH in kinds(mismatch)


def test_bad_arguments_and_missing_name() -> None:
    turn = parse_turn(
        '<tool_call>{"name": "a", "arguments": [1]}</tool_call>'
        '<tool_call>{"arguments": {}}</tool_call>'
    )
    assert kinds(turn) == {FormatErrorKind.BAD_ARGUMENTS, FormatErrorKind.MISSING_NAME}
    stringly = parse_turn('<tool_call>{"name": "a", "arguments": "{\\"x\\": 2}"}</tool_call>')
    assert stringly.calls[0].arguments == {"x": 2}


def test_answer_and_bare_text() -> None:
    assert parse_turn("<answer>42</answer>").is_final
    bare = parse_turn("It is sunny.")
    assert bare.answer == "It is sunny." and FormatErrorKind.NO_ACTION in kinds(bare)
    assert parse_turn("It is sunny.", strict=True).answer is None
    truncated = parse_turn("<answer>partial")
    assert truncated.answer == "partial" and FormatErrorKind.TRUNCATED in kinds(truncated)
    assert parse_turn("<answer>partial", strict=True).answer is None


def test_calls_and_answer_keeps_calls() -> None:
    turn = parse_turn('<tool_call>{"name": "a", "arguments": {}}</tool_call><answer>done</answer>')
    assert turn.answer is None and len(turn.calls) == 1
    assert FormatErrorKind.CALLS_AND_ANSWER in kinds(turn)


def test_tags_inside_think_are_ignored() -> None:
    turn = parse_turn(
        "<think>maybe <answer>x</answer></think>"
        '<tool_call>{"name": "a", "arguments": {}}</tool_call>'
    )
    assert turn.answer is None and len(turn.calls) == 1


def test_string_argument_cannot_close_the_tag() -> None:
    turn = Turn(
        phase="execute",
        calls=[ToolCall(id="call_0", name="a", arguments={"q": "</tool_call><answer>x</answer>"})],
    )
    parsed = parse_turn(render_turn(turn), strict=True)
    assert parsed.valid and parsed.calls == turn.calls


def test_raw_tags_inside_a_json_string_stay_in_the_string() -> None:
    text = (
        "<phase>execute</phase>"
        '<tool_call>{"name": "mail", "arguments": {"to": "a</tool_call><tool_call>x<answer>"}}'
        "</tool_call>\n"
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    turn = parse_turn(text, strict=True)
    assert turn.valid, turn.errors
    assert [call.name for call in turn.calls] == ["mail", "b"]
    assert turn.calls[0].arguments == {"to": "a</tool_call><tool_call>x<answer>"}


def test_json_nested_past_the_recursion_limit_is_a_format_error() -> None:
    deep = "[" * 100_000
    turn = parse_turn(f"<tool_call>{deep}</tool_call>")
    assert kinds(turn) == {FormatErrorKind.MALFORMED_JSON} and turn.calls == []
    in_a_string = parse_turn(
        "<tool_call>" + json.dumps({"name": "a", "arguments": deep}) + "</tool_call>"
    )
    assert kinds(in_a_string) == {FormatErrorKind.BAD_ARGUMENTS}
    structured = turn_from_openai("", [{"function": {"name": "a", "arguments": deep}}])
    assert kinds(structured) == {FormatErrorKind.MALFORMED_JSON}


def test_a_body_that_is_not_json_still_ends_at_the_first_closing_tag() -> None:
    turn = parse_turn(
        '<tool_call>{"name": "a", "arguments": {"q": "x</tool_call>'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    assert FormatErrorKind.MALFORMED_JSON in kinds(turn)
    assert [call.name for call in turn.calls] == ["b"]


def test_observations_round_trip_in_order() -> None:
    results = [
        ToolResult(call_id="t0_0", name="w__f", content={"temp": 21.5}),
        ToolResult(call_id="t0_1", name="w__g", error="boom", error_kind=ToolErrorKind.TOOL_ERROR),
    ]
    observations = parse_observations(render_observations(results))
    assert [o.id for o in observations] == ["t0_0", "t0_1"]
    assert observations[0].content == {"temp": 21.5}
    assert observations[1].content == {"error": {"type": "tool_error", "message": "boom"}}


def test_openai_structured_calls_map_to_a_turn() -> None:
    turn = turn_from_openai(
        "<phase>execute</phase>",
        [
            {
                "id": "x",
                "type": "function",
                "function": {"name": "w__f", "arguments": json.dumps({"city": "Rome"})},
            },
            {"id": "y", "type": "function", "function": {"name": "w__g", "arguments": "{broken"}},
        ],
    )
    assert turn.phase == "execute"
    assert [call.name for call in turn.calls] == ["w__f"]
    assert FormatErrorKind.MALFORMED_JSON in kinds(turn)

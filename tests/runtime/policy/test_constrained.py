"""The turn grammar of constrained decoding, checked with llguidance on SmolLM2's tokenizer.

Each check tokenizes a turn and asks a fresh matcher how many of its tokens (and a final
end-of-sequence token) the grammar accepts: the whole turn, or fewer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paraagent_runtime.actions import Turn, parse_turn, render_turn
from paraagent_runtime.meta import META_TOOL_SPECS
from paraagent_runtime.policy.constrained import (
    LONG_LOOP_PERIOD,
    LOOP_PERIOD,
    LOOP_WINDOW,
    RELAPSE_WINDOW,
    STRING_CHARS_PER_TOKEN,
    TEXT_CHARS_PER_TOKEN,
    WRAP_UP_CHARS,
    Closers,
    Constrainer,
    ToolSchema,
    TurnFormat,
    turn_grammar,
)
from paraagent_runtime.tools import ToolCall

llguidance = pytest.importorskip("llguidance")

TOUCAN = Path("/work/shared/data/toucan/mcp_servers")

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}
AWKWARD: dict[str, dict[str, Any]] = {
    "nested_enum": {
        "type": "object",
        "properties": {
            "seat": {
                "type": "object",
                "properties": {"row": {"enum": [1, 2, 3]}, "side": {"enum": ["aisle", "window"]}},
                "required": ["row", "side"],
                "additionalProperties": False,
            },
            "extras": {"type": "array", "items": {"enum": ["bag", "meal"]}, "maxItems": 2},
        },
        "required": ["seat"],
    },
    "pattern": {
        "type": "object",
        "properties": {"iata": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "required": ["iata"],
    },
    "open_map": {
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
    },
    "refs": {
        "type": "object",
        "properties": {"point": {"$ref": "#/$defs/point"}},
        "required": ["point"],
        "$defs": {
            "point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
            }
        },
    },
}
REJECTED = {
    "type": "object",
    "properties": {"ip": {"type": "string", "pattern": "(?<=a)b"}},
    "required": ["ip"],
}


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from paraagent_runtime.policy.smollm2 import load_smollm2_tokenizer

    return load_smollm2_tokenizer()


@pytest.fixture(scope="module")
def ll_tokenizer(tokenizer: Any) -> Any:
    import llguidance.hf

    return llguidance.hf.from_tokenizer(tokenizer)


def accepted(ll_tokenizer: Any, tokenizer: Any, turn_format: TurnFormat, text: str) -> bool:
    """Whether the grammar of ``turn_format`` accepts ``text`` as a whole turn."""
    from llguidance import LLMatcher

    grammar = LLMatcher.grammar_from_lark(turn_grammar(turn_format).lark)
    matcher = LLMatcher(ll_tokenizer, grammar, log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    ids = [*tokenizer.encode(text), tokenizer.eos_token_id]
    return matcher.validate_tokens(ids) == len(ids)


def call_turn(phase: str | None, *calls: tuple[str, dict[str, Any]]) -> str:
    """A turn rendered as the demos are (``render_turn``)."""
    turn = Turn(
        phase=phase,  # type: ignore[arg-type]
        calls=[
            ToolCall(id=f"c{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)
        ],
    )
    return render_turn(turn)


def meta_tools() -> tuple[ToolSchema, ...]:
    return tuple(ToolSchema(name=s.name, parameters=s.input_schema) for s in META_TOOL_SPECS)


def builtin_tools() -> tuple[ToolSchema, ...]:
    from mcp_servers.toolenv import ToolEnv

    specs = ToolEnv.builtin(seed=0).specs()
    return meta_tools() + tuple(ToolSchema(name=s.name, parameters=s.input_schema) for s in specs)


def test_builtin_toolenv_tools_compile_without_fallbacks_and_rendered_turns_pass(
    ll_tokenizer: Any, tokenizer: Any
) -> None:
    tools = builtin_tools()
    turn_format = TurnFormat(tools=tools)
    assert turn_grammar(turn_format).fallbacks == ()
    assert turn_grammar(turn_format) is turn_grammar(TurnFormat(tools=tools))
    explore = call_turn(
        "explore", ("search_tools", {"query": "a<b weather"}), ("inspect_tool", {"name": "x"})
    )
    answer = render_turn(Turn(think="2 < 3, so", answer="Sunny in <b>Paris</b>"))
    for text in (explore, answer, "<phase>execute</phase>\n<answer>done</answer>"):
        assert accepted(ll_tokenizer, tokenizer, turn_format, text), text
        assert parse_turn(text, strict=True).valid


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_awkward_schemas_take_valid_arguments_and_refuse_schema_fragments(
    name: str, ll_tokenizer: Any, tokenizer: Any
) -> None:
    valid = {
        "nested_enum": {"seat": {"row": 2, "side": "aisle"}, "extras": ["bag"]},
        "pattern": {"iata": "CDG"},
        "open_map": {"id": 3, "note": "free"},
        "refs": {"point": {"x": 1.5, "y": -2}},
    }[name]
    invalid = {
        "nested_enum": {"seat": {"row": 4, "side": "aisle"}},
        "pattern": {"iata": "cdg"},
        "open_map": {"id": 3, "note": 5},
        "refs": {"point": {"x": "1"}},
    }[name]
    fragment = {key: {"type": "number", "description": "a value"} for key in valid}
    turn_format = TurnFormat(tools=(ToolSchema(name=name, parameters=AWKWARD[name]),))
    assert turn_grammar(turn_format).fallbacks == ()
    assert accepted(ll_tokenizer, tokenizer, turn_format, call_turn("execute", (name, valid)))
    for arguments in (invalid, fragment):
        text = call_turn("execute", (name, arguments))
        assert not accepted(ll_tokenizer, tokenizer, turn_format, text), text


def test_malformed_json_and_unknown_tools_are_refused(ll_tokenizer: Any, tokenizer: Any) -> None:
    turn_format = TurnFormat(tools=(ToolSchema(name="weather", parameters=WEATHER),))
    good = call_turn("execute", ("weather", {"city": "Paris", "units": "metric"}))
    assert accepted(ll_tokenizer, tokenizer, turn_format, good)
    for text in (
        good.replace('"}}', '"}'),
        good.replace('"weather"', '"weather_v2"'),
        good.replace('"Paris"', "Paris"),
        good.replace("{", "{ ", 1),
        call_turn("execute", ("weather", {"units": "metric"})),
    ):
        assert not accepted(ll_tokenizer, tokenizer, turn_format, text), text


def test_modes_phases_and_the_call_limit(ll_tokenizer: Any, tokenizer: Any) -> None:
    tools = (*meta_tools(), ToolSchema(name="weather", parameters=WEATHER))
    paris = ("weather", {"city": "Paris"})
    search = ("search_tools", {"query": "weather"})
    paraact = TurnFormat(mode="paraact", max_calls=2, tools=tools)
    react = TurnFormat(mode="react", max_calls=1, tools=tools)
    decoupled = TurnFormat(mode="decoupled", max_calls=2, tools=tools)
    executing = TurnFormat(mode="decoupled", max_calls=2, tools=tools[2:])
    cases = [
        (paraact, call_turn("execute", paris, paris), True),
        (paraact, call_turn("execute", paris, search), True),
        (paraact, call_turn("execute", paris, paris, paris), False),
        (paraact, call_turn("explore", paris), False),
        (paraact, call_turn(None, paris), False),
        (decoupled, call_turn("explore", search, search), True),
        (decoupled, call_turn("execute", paris, paris), True),
        (decoupled, call_turn("execute", paris, search), False),
        (executing, "<phase>execute</phase>\n<answer>42</answer>", True),
        (executing, "<phase>explore</phase>\n<answer>42</answer>", False),
        (executing, call_turn("explore", search), False),
        (react, call_turn(None, paris), True),
        (react, call_turn(None, paris, paris), False),
        (react, call_turn("execute", paris), False),
        (react, "<answer>42</answer>", True),
        (react, "<phase>execute</phase>\n<answer>42</answer>", False),
    ]
    for turn_format, text, expected in cases:
        got = accepted(ll_tokenizer, tokenizer, turn_format, text)
        assert got is expected, (turn_format.mode, text)


def test_a_turn_budget_bounds_free_text_strings_and_undeclared_keys(
    ll_tokenizer: Any, tokenizer: Any
) -> None:
    """With ``max_tokens`` a repeating model must close its turn; real turns still pass."""
    note = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"enum": ["metric", "imperial"]}},
        "required": ["city"],
    }
    tools = (
        ToolSchema(name="note", parameters=note),
        ToolSchema(name="open_map", parameters=AWKWARD["open_map"]),
    )
    budget = 16
    bounded = TurnFormat(tools=tools, max_tokens=budget)
    unbounded = TurnFormat(tools=tools)
    chars = STRING_CHARS_PER_TOKEN * budget
    text = TEXT_CHARS_PER_TOKEN * budget
    cases = [
        (call_turn("execute", ("note", {"city": "x" * chars, "units": "metric"})), True),
        (call_turn("execute", ("note", {"city": "x" * (chars + 1)})), False),
        (call_turn("execute", ("note", {"city": "Paris", "extra": 1})), False),
        (call_turn("execute", ("open_map", {"id": 1, "note": "y" * chars})), True),
        (call_turn("execute", ("open_map", {"id": 1, "note": "y" * (chars + 1)})), False),
        ("<think>" + "t" * text + "</think><answer>" + "a" * text + "</answer>", True),
        ("<think>" + "t" * (text + 1) + "</think><answer>ok</answer>", False),
        ("<answer>" + "a" * (text + 1) + "</answer>", False),
    ]
    for turn, expected in cases:
        assert accepted(ll_tokenizer, tokenizer, bounded, turn) is expected, turn
        assert accepted(ll_tokenizer, tokenizer, unbounded, turn), turn
    # The caller's schema is not changed by the bound.
    assert "maxLength" not in note["properties"]["city"]
    assert "additionalProperties" not in note


def test_a_schema_the_bound_makes_unsatisfiable_is_used_as_written(
    ll_tokenizer: Any, tokenizer: Any
) -> None:
    """A live MCP schema requires a key it does not declare: closing it would leave no call."""
    deploy = {
        "type": "object",
        "properties": {"modal_path": {"type": "string"}},
        "required": ["message"],
    }
    turn_format = TurnFormat(tools=(ToolSchema(name="deploy", parameters=deploy),), max_tokens=16)
    assert turn_grammar(turn_format).fallbacks == ()
    written = call_turn("execute", ("deploy", {"modal_path": "x" * 40, "message": "hi"}))
    assert accepted(ll_tokenizer, tokenizer, turn_format, written)
    wrong = call_turn("execute", ("deploy", {"modal_path": 3, "message": "hi"}))
    assert not accepted(ll_tokenizer, tokenizer, turn_format, wrong)


def test_a_schema_llguidance_rejects_falls_back_to_free_arguments(
    ll_tokenizer: Any, tokenizer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tools = (
        ToolSchema(name="lookbehind", parameters=REJECTED),
        ToolSchema(name="weather", parameters=WEATHER),
    )
    turn_format = TurnFormat(tools=tools)
    with caplog.at_level(logging.WARNING, logger="paraagent_runtime.policy.constrained"):
        grammar = turn_grammar(turn_format)
    assert grammar.fallbacks == ("lookbehind",)
    assert "1 tool schema(s) rejected" in caplog.text
    free = call_turn("execute", ("lookbehind", {"anything": [1, {"goes": True}]}))
    assert accepted(ll_tokenizer, tokenizer, turn_format, free)
    not_object = free.replace('{"anything": [1, {"goes": true}]}', "[1]")
    assert not accepted(ll_tokenizer, tokenizer, turn_format, not_object)
    strict = call_turn("execute", ("weather", {"city": 3}))
    assert not accepted(ll_tokenizer, tokenizer, turn_format, strict)


def toucan_schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(TOUCAN.glob("0*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        for tool in record["metadata"]["remote_server_response"].get("tools") or []:
            yield tool["name"], tool.get("input_schema") or {}


@pytest.mark.skipif(not TOUCAN.is_dir(), reason="the shared Toucan data is not on this machine")
def test_real_catalog_schemas_with_awkward_features_compile(ll_tokenizer: Any) -> None:
    """The first live Toucan schema with each feature compiles (a turn of all of them too)."""
    features = {
        "enum": '"enum"',
        "nested": '"properties": {"type": "object"',
        "array": '"type": "array"',
        "pattern": '"pattern"',
        "additionalProperties": '"additionalProperties": {',
        "ref": '"$ref"',
    }
    found: dict[str, ToolSchema] = {}
    for name, schema in toucan_schemas():
        text = json.dumps(schema)
        for feature, marker in features.items():
            if feature not in found and marker in text:
                found[feature] = ToolSchema(name=name, parameters=schema)
        if len(found) == len(features):
            break
    assert set(found) >= {"enum", "array", "pattern"}
    turn_format = TurnFormat(tools=tuple(found.values()))
    grammar = turn_grammar(turn_format)
    assert len(grammar.fallbacks) <= 1
    from llguidance import LLMatcher

    matcher = LLMatcher(ll_tokenizer, LLMatcher.grammar_from_lark(grammar.lark), log_level=0)
    assert not matcher.is_error(), matcher.get_error()


def test_a_constraint_masks_then_follows_the_picked_tokens(tokenizer: Any) -> None:
    import numpy as np

    turn_format = TurnFormat(mode="react", tools=(ToolSchema(name="weather", parameters=WEATHER),))
    text = call_turn(None, ("weather", {"city": "Oslo"}))
    constraint = Constrainer(tokenizer, [tokenizer.eos_token_id]).start(turn_format)
    first = constraint.mask(np.zeros(len(tokenizer)))
    assert np.isfinite(first).sum() < 100
    for token in [*tokenizer.encode(text), tokenizer.eos_token_id]:
        masked = constraint.mask(np.zeros(len(tokenizer) + 7))
        assert masked[token] == 0 and np.isinf(masked[len(tokenizer) :]).all()
        constraint.advance(token)
    assert not constraint.active
    assert constraint.allowed() is None


def test_a_call_stuck_repeating_a_token_closes_once_the_loop_is_broken(tokenizer: Any) -> None:
    """A "model" preferring ``the`` above all, then a quote, in a search query."""
    import numpy as np

    turn_format = TurnFormat(tools=meta_tools(), max_tokens=384)
    constraint = Constrainer(tokenizer, [tokenizer.eos_token_id]).start(turn_format)
    ids = tokenizer.encode(
        '<phase>explore</phase>\n<tool_call>{"name": "search_tools", "arguments": {"query": "'
    )
    for token in ids:
        constraint.advance(token)
    preferred = [tokenizer.encode(text)[0] for text in ("the", '"')]
    looped = False
    while not tokenizer.decode(ids).endswith("</tool_call>"):
        allowed = constraint.allowed()
        assert allowed is not None and len(ids) < 200
        if constraint.banned and not looped:
            # Right after the loop only tokens that close the JSON string may come.
            looped = True
            pieces = tokenizer.convert_ids_to_tokens(np.flatnonzero(allowed).tolist())
            assert pieces and all('"' in piece for piece in pieces)
        token = next((t for t in preferred if allowed[t]), int(np.flatnonzero(allowed)[0]))
        ids.append(token)
        constraint.advance(token)
    turn = parse_turn(tokenizer.decode(ids), strict=True)
    assert turn.valid
    assert turn.calls[0].arguments["query"] == "the" * (LOOP_WINDOW + 1)


def test_only_a_loop_changes_what_is_allowed(tokenizer: Any) -> None:
    import numpy as np

    turn_format = TurnFormat(tools=meta_tools())
    constrainer = Constrainer(tokenizer, [tokenizer.eos_token_id])
    (the,) = tokenizer.encode("the")
    prefix = tokenizer.encode("<think>")
    natural = tokenizer.encode(
        "The user wants the weather in Paris and in Oslo, then the cheaper of two hotels near "
        "the station; the first search returned two tools, so I load the forecast and compare "
        "the prices before I answer with the better option and the temperature."
    )
    for cycle, banned in (
        ([the], {the}),
        (tokenizer.encode(" a b"), set(tokenizer.encode(" a b"))),
    ):
        looping = constrainer.start(turn_format)
        repeats = (LOOP_WINDOW + len(cycle)) // len(cycle) + 1
        for token in [*prefix, *cycle * repeats]:
            looping.advance(token)
        allowed = looping.allowed()
        assert allowed is not None
        assert looping.banned == banned and not allowed[sorted(banned)].any()
        # The tokens after the loop end the think text it is in: its closing tag, spelled out.
        closing: list[int] = []
        while allowed is not None and allowed.sum() == 1:
            closing.append(int(np.flatnonzero(allowed)[0]))
            looping.advance(closing[-1])
            allowed = looping.allowed()
        assert tokenizer.decode(closing) == "</think>"
        # Then the turn goes on to its action, as after any think text.
        assert allowed is not None
        after = tokenizer.convert_ids_to_tokens(np.flatnonzero(allowed).tolist())
        assert set(after) == {"<", "Ċ"}
    plain = constrainer.start(turn_format)
    for token in [*prefix, *natural]:
        plain.advance(token)
    assert plain.banned == set()
    assert len(natural) > LOOP_WINDOW + LOOP_PERIOD


def test_a_drift_into_a_second_loop_and_a_repeated_phrase_are_broken(tokenizer: Any) -> None:
    turn_format = TurnFormat(tools=meta_tools())
    constrainer = Constrainer(tokenizer, [tokenizer.eos_token_id])
    prefix = tokenizer.encode("<think>")
    nine, two = (tokenizer.encode(digit)[0] for digit in ("9", "2"))
    drifting = constrainer.start(turn_format)
    for token in [*prefix, *[nine] * (LOOP_WINDOW + 1)]:
        drifting.advance(token)
    assert drifting.banned == {nine}
    # The next loop counts after RELAPSE_WINDOW + 1 tokens, not LOOP_WINDOW + 1.
    for count in range(1, RELAPSE_WINDOW + 2):
        drifting.advance(two)
        assert (two in drifting.banned) == (count == RELAPSE_WINDOW + 1)
    # A phrase longer than LOOP_PERIOD tokens counts once it is said three times in a row.
    phrase = tokenizer.encode(
        " then I search the catalog for a tool that converts the amount of money into euros,"
        " and I call it"
    )
    assert LOOP_PERIOD < len(phrase) <= LONG_LOOP_PERIOD
    repeated = constrainer.start(turn_format)
    for token in [*prefix, *phrase, *phrase]:
        repeated.advance(token)
    assert repeated.banned == set()
    for token in phrase:
        repeated.advance(token)
    assert repeated.banned == set(phrase)


def test_a_turn_that_fills_a_string_with_garbage_is_wrapped_up(tokenizer: Any) -> None:
    """A "model" writing words that never repeat, and another item whenever it may."""
    import numpy as np

    schema = {
        "type": "object",
        "properties": {
            "to": {"type": "array", "items": {"type": "string"}},
            "subject": {"type": "string"},
        },
        "required": ["to", "subject"],
    }
    tools = (ToolSchema(name="send", parameters=schema),)
    turn_format = TurnFormat(tools=tools, max_tokens=48)
    constraint = Constrainer(tokenizer, [tokenizer.eos_token_id]).start(turn_format)
    ids = tokenizer.encode(
        '<phase>execute</phase>\n<tool_call>{"name": "send", "arguments": {"to": ["'
    )
    for token in ids:
        constraint.advance(token)
    pieces = tokenizer.convert_ids_to_tokens(list(range(2000, 12000)))
    words = [2000 + i for i, piece in enumerate(pieces) if piece.isalpha() and len(piece) > 3]
    letters = tokenizer.convert_tokens_to_ids(list("abcdefghijklmnopqrstuvwxyz"))
    # "><" would close this call and open the next one in a single token.
    another = tokenizer.convert_tokens_to_ids(['",', 'Ġ"', ",", "><"])
    assert not constraint.degenerate
    while constraint.active:
        allowed = constraint.allowed()
        assert allowed is not None and len(ids) < 160
        token = next(
            (t for t in [*words, *letters, *another] if allowed[t]),
            int(np.flatnonzero(allowed)[0]),
        )
        if token in words:
            words.remove(token)
        ids.append(token)
        constraint.advance(token)
    assert constraint.degenerate and not constraint.banned
    text = tokenizer.decode(ids[:-1])
    turn = parse_turn(text, strict=True)
    assert turn.valid, tokenizer.decode(ids)
    # Once the call's JSON closed, its closing tag was spelled out and the turn ended.
    assert len(turn.calls) == 1 and text.endswith("}}</tool_call>")
    (recipient,) = turn.calls[0].arguments["to"]
    assert len(recipient) == STRING_CHARS_PER_TOKEN * 48
    # The next string closes once it holds WRAP_UP_CHARS characters (one word may overshoot).
    assert WRAP_UP_CHARS <= len(turn.calls[0].arguments["subject"]) <= WRAP_UP_CHARS + 16


def test_closers_are_closing_quotes_in_json_and_tags_in_text(tokenizer: Any) -> None:
    closers = Closers.of(tokenizer)
    quote, quote_comma, escaped, tag = tokenizer.convert_tokens_to_ids(['"', '",', '\\"', "</"])
    assert closers.quote[quote] and closers.quote[quote_comma]
    assert not closers.quote[escaped] and not closers.quote[tag]
    assert tokenizer.decode(closers.closing_tags["think"]) == "</think>"
    assert tokenizer.decode(closers.closing_tags["answer"]) == "</answer>"
    assert closers.open_text("<think>the the the") == "think"
    in_call = '<think>plan</think>\n<tool_call>{"name": "x", "arguments": {"q": "a'
    assert closers.open_text(in_call) is None
    assert closers.open_text("<think>plan</think><answer>It is 12 °C in") == "answer"


def test_the_environment_switch_turns_the_default_off_and_typos_are_errors(monkeypatch) -> None:
    from paraagent_runtime.errors import ConfigError
    from paraagent_runtime.policy import policy_from_spec
    from paraagent_runtime.policy.constrained import CONSTRAINED_ENV

    monkeypatch.setenv(CONSTRAINED_ENV, "off")
    assert policy_from_spec("paraagent").constrained is False  # type: ignore[attr-defined]
    assert policy_from_spec("paraagent", constrained=True).constrained is True  # type: ignore[attr-defined]
    monkeypatch.setenv(CONSTRAINED_ENV, "ON")
    assert policy_from_spec("local").constrained is True  # type: ignore[attr-defined]
    monkeypatch.setenv(CONSTRAINED_ENV, "nope")
    with pytest.raises(ConfigError, match="PARAAGENT_CONSTRAINED_DECODING='nope'"):
        policy_from_spec("local")


def test_the_local_specs_take_the_default_and_a_switch() -> None:
    from paraagent_runtime.policy import policy_from_spec
    from paraagent_runtime.policy.constrained import DEFAULT_CONSTRAINED

    for spec in ("paraagent", "local", "transformers:paraagent"):
        assert policy_from_spec(spec).constrained is DEFAULT_CONSTRAINED  # type: ignore[attr-defined]
        assert policy_from_spec(spec, constrained=False).constrained is False  # type: ignore[attr-defined]

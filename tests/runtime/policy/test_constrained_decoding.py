"""Constrained decoding on real local backends: a random model's tool calls become valid.

The tiny random-init model (SmolLM2's tokenizer) writes garbage when it decodes freely. Under the
turn grammar every turn it ends parses strictly, and its calls name a loaded tool with arguments
that validate against that tool's schema; ONNX Runtime GenAI and transformers pick the same
tokens. A random model rarely closes free text: the grammar keeps it inside ``<think>`` or
``<answer>`` (or a JSON string) until the token budget runs out, so the tools here take enums,
bounded numbers, booleans and nested objects, and a turn that runs out of tokens must be in free
text.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from paraagent_runtime.actions import parse_turn
from paraagent_runtime.agent import Agent, AgentConfig
from paraagent_runtime.policy import (
    Completion,
    Message,
    OnnxGenAIPolicy,
    SamplingParams,
    TransformersPolicy,
)
from paraagent_runtime.policy.constrained import ToolSchema, TurnFormat
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.toolspace import Toolspace

from .test_constrained import AWKWARD

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime_genai") is None
    or importlib.util.find_spec("llguidance") is None,
    reason="onnxruntime-genai or llguidance is not installed",
)

FORECAST = {
    "type": "object",
    "properties": {
        "units": {"enum": ["metric", "imperial"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "alerts": {"type": "boolean"},
    },
    "required": ["units", "days"],
    "additionalProperties": False,
}
SEAT = {**AWKWARD["nested_enum"], "additionalProperties": False}
CONVERT = {
    "type": "object",
    "properties": {
        "amount": {"type": "number", "minimum": 0, "maximum": 100},
        "currency": {"enum": ["EUR", "USD", "JPY"]},
    },
    "required": ["amount", "currency"],
    "additionalProperties": False,
}
TOOLSETS = {
    "forecast": {"weather__forecast": FORECAST},
    "seat_and_forecast": {"flights__seat": SEAT, "weather__forecast": FORECAST},
    "convert": {"fx__convert": CONVERT},
}
FREE_TEXT = re.compile(r"<think>|(<phase>(explore|execute)</phase>\n?)?<answer>")
PROMPTS = ["Weather in Paris for three days?", "Book me an aisle seat.", "Convert 20 EUR to JPY."]


def messages(prompt: str) -> list[Message]:
    return [
        Message(role="system", content="You solve tasks with tools."),
        Message(role="user", content=prompt),
    ]


def turn_format(toolset: str, mode: str) -> TurnFormat:
    tools = tuple(ToolSchema(name=n, parameters=s) for n, s in TOOLSETS[toolset].items())
    return TurnFormat(mode=mode, max_calls=2, tools=tools)  # type: ignore[arg-type]


def check_ended_or_in_free_text(completion: Completion, fmt: TurnFormat) -> bool:
    """A turn that ended is valid (:func:`check_valid_turn`); one that did not is in free text.

    Returns whether the turn ended in calls.
    """
    if completion.finish_reason == "stop":
        return check_valid_turn(completion.text, fmt)
    assert FREE_TEXT.match(completion.text), completion.text
    return False


def check_valid_turn(text: str, fmt: TurnFormat) -> bool:
    """``text`` parses strictly and answers, or each call names a tool of ``fmt`` validly.

    Returns whether it calls.
    """
    turn = parse_turn(text, strict=True)
    assert turn.valid, (text, turn.errors)
    if turn.is_final:
        return False
    assert 1 <= len(turn.calls) <= (1 if fmt.mode == "react" else fmt.max_calls)
    assert (turn.phase is None or turn.phase_inferred) if fmt.mode == "react" else turn.phase
    schemas = {tool.name: tool.parameters for tool in fmt.tools}
    for call in turn.calls:
        jsonschema.validate(call.arguments, schemas[call.name])
    return True


@pytest.fixture(scope="module")
def tiny_export(tiny_model_dir: Path, export_cache: Path) -> Path:
    from paraagent_runtime.policy.ort_export import ensure_ort_model

    return ensure_ort_model(tiny_model_dir, cache_dir=export_cache)


@pytest.fixture
def ort(tiny_model_dir: Path, tiny_export: Path, export_cache: Path) -> OnnxGenAIPolicy:
    return OnnxGenAIPolicy(
        tiny_model_dir, model_name="tiny", cache_dir=export_cache, constrained=True
    )


@pytest.mark.parametrize("mode", ["react", "paraact"])
@pytest.mark.parametrize("toolset", sorted(TOOLSETS))
async def test_free_turns_are_garbage_and_constrained_turns_are_valid_calls(
    ort: OnnxGenAIPolicy, toolset: str, mode: str
) -> None:
    fmt = turn_format(toolset, mode)
    sampling = SamplingParams(max_tokens=160, turn_format=fmt)
    called = 0
    for prompt in PROMPTS:
        ort.constrained = False
        free = await ort.complete(messages(prompt), sampling=sampling)
        assert not parse_turn(free.text, strict=True).valid, free.text
        ort.constrained = True
        constrained = await ort.complete(messages(prompt), sampling=sampling)
        called += check_ended_or_in_free_text(constrained, fmt)
    assert called >= 2


async def test_transformers_constrains_to_the_same_tokens(
    ort: OnnxGenAIPolicy, tiny_model_dir: Path
) -> None:
    reference = TransformersPolicy(tiny_model_dir, prefix_cache_mb=0, constrained=True)
    for toolset, mode in (("seat_and_forecast", "paraact"), ("convert", "react")):
        fmt = turn_format(toolset, mode)
        sampling = SamplingParams(max_tokens=160, turn_format=fmt)
        fast = await ort.complete(messages(PROMPTS[0]), sampling=sampling)
        slow = await reference.complete(messages(PROMPTS[0]), sampling=sampling)
        check_valid_turn(fast.text, fmt)
        assert slow.token_ids == fast.token_ids and slow.text == fast.text
        assert slow.logprobs == pytest.approx(fast.logprobs, abs=1e-3)
    # The grammar's forced tokens (JSON punctuation, tool names) were drafted and kept.
    assert ort.draft_stats.accepted > 0


async def test_sampled_constrained_turns_stay_valid(ort: OnnxGenAIPolicy) -> None:
    fmt = turn_format("seat_and_forecast", "react")
    for seed in range(4):
        sampling = SamplingParams(max_tokens=100, temperature=1.0, seed=seed, turn_format=fmt)
        completion = await ort.complete(messages(PROMPTS[0]), sampling=sampling)
        check_ended_or_in_free_text(completion, fmt)


async def test_the_agent_hands_the_loaded_tools_to_the_constraint(ort: OnnxGenAIPolicy) -> None:
    async def convert(amount: float, currency: str) -> dict[str, Any]:
        return {"amount": amount, "currency": currency}

    source = FunctionToolSource(
        "fx", [FunctionTool(convert, description="Convert money.", input_schema=CONVERT)]
    )
    space = Toolspace([source], preload_threshold=10)
    await space.refresh()
    config = AgentConfig(mode="react", max_turns=1, sampling=SamplingParams(max_tokens=40))
    episode = await Agent(ort, space, config).run("Convert 20 EUR to JPY.")
    (turn,) = episode.turns
    # Free decoding writes garbage here; constrained, the turn opens a call of a tool the agent
    # has loaded (the model then loops in the search query's free string).
    called = re.match(r'<tool_call>\{"name": "([^"]+)", "arguments": \{', turn.text)
    assert called is not None, turn.text
    assert called.group(1) in {"fx__convert", "search_tools", "inspect_tool"}


@pytest.mark.slow
async def test_the_shipped_policy_keeps_its_valid_turns() -> None:
    """Where the shipped policy's free turn already fits the grammar, the constrained one equals it.

    Fits: strictly valid, and every call's arguments valid under its closed schema (a free turn
    may add keys such as ``"type"`` to ``search_tools``; the grammar rightly refuses them).
    """
    from mcp_servers.toolenv import ToolEnv, generate_tasks
    from paraagent_runtime.meta import META_TOOL_SPECS
    from paraagent_runtime.policy import policy_from_spec
    from paraagent_runtime.prompts import system_prompt

    specs = sorted(ToolEnv.builtin(seed=0).specs(), key=lambda spec: spec.name)[:6]
    listed = [*META_TOOL_SPECS, *specs]
    fmt = TurnFormat(
        tools=tuple(ToolSchema(name=s.name, parameters=s.input_schema) for s in listed)
    )

    policy = policy_from_spec("onnx:paraagent", constrained=True)
    system = Message(role="system", content=system_prompt(preloaded=specs))
    compared = 0
    for task in generate_tasks(4, seed=0, split="dev"):
        prompt = [system, Message(role="user", content=task.query)]
        sampling = SamplingParams(max_tokens=96, turn_format=fmt)
        policy.constrained = False
        free = await policy.complete(prompt, sampling=sampling)
        policy.constrained = True
        constrained = await policy.complete(prompt, sampling=sampling)
        turn = parse_turn(free.text, strict=True)
        if free.finish_reason == "stop" and turn.valid and _fit_their_schemas(turn.calls, listed):
            assert constrained.token_ids == free.token_ids, (free.text, constrained.text)
            compared += 1
    assert compared >= 1
    await policy.aclose()


def _closed(schema: Any) -> Any:
    """``schema`` as the grammar reads it: an object that lists properties takes no others."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    closed = {key: _closed(value) for key, value in schema.items()}
    if "properties" in closed:
        closed.setdefault("additionalProperties", False)
    return closed


def _fit_their_schemas(calls: Any, specs: Any) -> bool:
    """Every call names a listed tool and its arguments are valid under the closed schema."""
    schemas = {spec.name: _closed(spec.input_schema) for spec in specs}
    return all(
        call.name in schemas
        and jsonschema.Draft202012Validator(schemas[call.name]).is_valid(call.arguments)
        for call in calls
    )

"""The ParaAct grammar: parse a model's turn into a :class:`Turn` and render turns back to text.

One assistant turn looks like::

    <think>optional reasoning</think>
    <phase>explore</phase>
    <tool_call>{"name": "search_tools", "arguments": {"query": "flight status"}}</tool_call>
    <tool_call>{"name": "search_tools", "arguments": {"query": "airport weather"}}</tool_call>

or ends the episode with ``<answer>…</answer>``. A call's JSON is read before its closing tag is
looked for, so a string value may hold any text, tags included. :func:`parse_turn` never raises
on model text: every problem becomes a :class:`FormatError` on the returned turn. In lenient
mode (serving) the parser salvages what it can; in strict mode (training) the same problems are
reported and nothing is guessed, so rewards can score them.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .meta import META_TOOLS
from .tools import ToolCall, ToolResult

__all__ = [
    "META_TOOLS",
    "FormatError",
    "FormatErrorKind",
    "Observation",
    "Phase",
    "Turn",
    "parse_observations",
    "parse_turn",
    "render_observations",
    "render_turn",
    "turn_from_openai",
]

Phase = Literal["explore", "execute"]

_THINK = re.compile(r"<think>(.*?)(</think>|\Z)", re.DOTALL)
_PHASE = re.compile(r"<phase>(.*?)</phase>", re.DOTALL)
_CALL_OPEN, _CALL_CLOSE = "<tool_call>", "</tool_call>"
_CALL = re.compile(r"<tool_call>(.*?)(</tool_call>|(?=<tool_call>)|\Z)", re.DOTALL)
_JSON = json.JSONDecoder()
_ANSWER = re.compile(r"<answer>(.*?)(</answer>|\Z)", re.DOTALL)
_RESPONSE = re.compile(
    r'<tool_response name="(?P<name>[^"]*)" id="(?P<id>[^"]*)">(?P<body>.*?)</tool_response>',
    re.DOTALL,
)


class FormatErrorKind(str, enum.Enum):  # noqa: UP042 - StrEnum changes str()/format()
    """The ways a turn can violate the grammar."""

    MALFORMED_JSON = "malformed_json"
    TRUNCATED = "truncated"
    MISSING_NAME = "missing_name"
    BAD_ARGUMENTS = "bad_arguments"
    UNKNOWN_PHASE = "unknown_phase"
    MULTIPLE_PHASES = "multiple_phases"
    PHASE_MISMATCH = "phase_mismatch"
    CALLS_AND_ANSWER = "calls_and_answer"
    NO_ACTION = "no_action"


class FormatError(BaseModel):
    """One grammar violation found in a turn, with the offending fragment (shortened)."""

    model_config = ConfigDict(frozen=True)

    kind: FormatErrorKind
    message: str
    fragment: str = ""


class Turn(BaseModel):
    """One parsed assistant turn.

    ``phase`` is the declared phase, or the inferred one when ``phase_inferred`` is true.
    ``errors`` lists every grammar violation; a turn with errors may still carry usable calls.
    """

    think: str | None = None
    phase: Phase | None = None
    phase_inferred: bool = False
    calls: list[ToolCall] = Field(default_factory=list)
    answer: str | None = None
    errors: list[FormatError] = Field(default_factory=list)
    text: str = ""

    @property
    def is_final(self) -> bool:
        """True when the turn answers (and so ends the episode)."""
        return self.answer is not None and not self.calls

    @property
    def valid(self) -> bool:
        """True when the turn follows the grammar exactly."""
        return not self.errors


def _short(fragment: str, limit: int = 120) -> str:
    fragment = fragment.strip()
    return fragment if len(fragment) <= limit else fragment[: limit - 1] + "…"


def infer_phase(calls: Sequence[ToolCall], meta_tools: Iterable[str] = META_TOOLS) -> Phase | None:
    """Infer the phase of a turn from its calls: all meta-tools → explore, any other → execute."""
    if not calls:
        return None
    meta = set(meta_tools)
    return "explore" if all(call.name in meta for call in calls) else "execute"


_NOT_READ: Any = object()


@dataclass(frozen=True)
class _CallBlock:
    """One ``<tool_call>`` block of a turn: where it lies, its body, whether it was closed.

    ``payload`` is the body's JSON value when the block was found by reading it
    (:func:`_call_blocks`), else ``_NOT_READ``.
    """

    start: int
    end: int
    body: str
    closed: bool
    payload: Any = _NOT_READ


def _call_blocks(text: str) -> list[_CallBlock]:
    """The ``<tool_call>`` blocks of ``text``, in order.

    A block whose body is one JSON value followed by ``</tool_call>`` ends there, whatever its
    strings hold: a model may write a raw ``</tool_call>`` inside a string value, which a scan
    for the tag alone would take for the end of the call. Any other body runs to the first
    ``</tool_call>``, the next ``<tool_call>`` or the end of the text.
    """
    blocks: list[_CallBlock] = []
    start = text.find(_CALL_OPEN)
    while start != -1:
        body_start = start + len(_CALL_OPEN)
        read = _read_json_body(text, body_start)
        if read is not None:
            payload, close = read
            end = close + len(_CALL_CLOSE)
            blocks.append(_CallBlock(start, end, text[body_start:close], True, payload))
        else:
            match = _CALL.match(text, start)
            assert match is not None  # the pattern matches wherever the opening tag is
            end = match.end()
            blocks.append(_CallBlock(start, end, match.group(1), closed=bool(match.group(2))))
        start = text.find(_CALL_OPEN, end)
    return blocks


def _read_json_body(text: str, position: int) -> tuple[Any, int] | None:
    """The JSON value at ``position`` and where the ``</tool_call>`` right after it starts.

    ``None`` when no JSON value starts there or no closing tag follows it.
    """
    try:
        payload, after = _JSON.raw_decode(text, _skip_space(text, position))
    except (ValueError, RecursionError):
        return None
    after = _skip_space(text, after)
    return (payload, after) if text.startswith(_CALL_CLOSE, after) else None


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _without_calls(text: str, blocks: Sequence[_CallBlock]) -> str:
    """``text`` with each call block replaced by a space."""
    pieces: list[str] = []
    position = 0
    for block in blocks:
        pieces.append(text[position : block.start])
        pieces.append(" ")
        position = block.end
    pieces.append(text[position:])
    return "".join(pieces)


def _parse_call_body(
    block: _CallBlock, index: int, id_prefix: str
) -> tuple[list[ToolCall], list[FormatError]]:
    """Parse one ``<tool_call>`` body; a JSON list of call objects is accepted too."""
    body = block.body.strip()
    payload = block.payload
    if payload is _NOT_READ:
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError) as exc:
            error = FormatError(
                kind=FormatErrorKind.MALFORMED_JSON,
                message=f"tool call #{index + 1} is not valid JSON: {exc}",
                fragment=_short(body),
            )
            return [], [error]
    items = payload if isinstance(payload, list) else [payload]
    calls: list[ToolCall] = []
    errors: list[FormatError] = []
    for offset, item in enumerate(items):
        call_index = index + offset
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            errors.append(
                FormatError(
                    kind=FormatErrorKind.MISSING_NAME,
                    message=f'tool call #{call_index + 1} needs a string "name"',
                    fragment=_short(body),
                )
            )
            continue
        arguments: Any = item.get("arguments", item.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError):
                pass
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            errors.append(
                FormatError(
                    kind=FormatErrorKind.BAD_ARGUMENTS,
                    message=(
                        f'tool call #{call_index + 1} ("{item["name"]}"): "arguments" must be a '
                        "JSON object"
                    ),
                    fragment=_short(body),
                )
            )
            continue
        calls.append(
            ToolCall(id=f"{id_prefix}_{len(calls) + index}", name=item["name"], arguments=arguments)
        )
    return calls, errors


def parse_turn(
    text: str,
    *,
    strict: bool = False,
    id_prefix: str = "call",
    meta_tools: Iterable[str] = META_TOOLS,
) -> Turn:
    """Parse one assistant turn. Never raises on model text.

    Args:
        text: the raw text the model produced for this turn.
        strict: when true nothing is salvaged (an unclosed ``<answer>`` or bare text is not an
            answer); violations are reported either way.
        id_prefix: prefix for the call ids (``<prefix>_<i>``), unique per episode in the loop.
        meta_tools: the explore-phase tool names, for phase inference and mismatch checks.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    errors: list[FormatError] = []
    think: str | None = None
    think_match = _THINK.search(text)
    rest = text
    if think_match:
        think = think_match.group(1).strip()
        if not think_match.group(2):
            errors.append(
                FormatError(kind=FormatErrorKind.TRUNCATED, message="<think> is never closed")
            )
        rest = text[: think_match.start()] + text[think_match.end() :]

    blocks = _call_blocks(rest)
    outside = _without_calls(rest, blocks)
    phase: Phase | None = None
    phases = _PHASE.findall(outside)
    if len(phases) > 1:
        errors.append(
            FormatError(
                kind=FormatErrorKind.MULTIPLE_PHASES,
                message=f"{len(phases)} <phase> tags in one turn; the first counts",
            )
        )
    if phases:
        declared = phases[0].strip().lower()
        if declared in ("explore", "execute"):
            phase = declared  # type: ignore[assignment]
        else:
            errors.append(
                FormatError(
                    kind=FormatErrorKind.UNKNOWN_PHASE,
                    message=f'unknown phase "{_short(phases[0], 40)}" (use explore or execute)',
                )
            )

    calls: list[ToolCall] = []
    for block in blocks:
        if not block.closed:
            errors.append(
                FormatError(
                    kind=FormatErrorKind.TRUNCATED,
                    message=f"tool call #{len(calls) + 1} is never closed",
                    fragment=_short(block.body),
                )
            )
            if strict:
                continue
        parsed, call_errors = _parse_call_body(block, len(calls), id_prefix)
        calls.extend(parsed)
        errors.extend(call_errors)

    answer: str | None = None
    answer_match = _ANSWER.search(outside)
    if answer_match:
        if answer_match.group(2):
            answer = answer_match.group(1).strip()
        else:
            errors.append(
                FormatError(kind=FormatErrorKind.TRUNCATED, message="<answer> is never closed")
            )
            if not strict:
                answer = answer_match.group(1).strip()

    if calls and answer is not None:
        errors.append(
            FormatError(
                kind=FormatErrorKind.CALLS_AND_ANSWER,
                message="a turn either calls tools or answers; the answer is ignored",
            )
        )
        answer = None

    if not calls and answer is None and not blocks and not answer_match:
        bare = _PHASE.sub("", outside).strip()
        errors.append(
            FormatError(
                kind=FormatErrorKind.NO_ACTION,
                message="the turn has neither <tool_call> nor <answer>",
                fragment=_short(bare),
            )
        )
        if not strict and bare:
            answer = bare

    inferred = infer_phase(calls, meta_tools)
    phase_inferred = False
    if phase is None and calls:
        phase, phase_inferred = inferred, True
    elif phase == "explore" and inferred == "execute":
        errors.append(
            FormatError(
                kind=FormatErrorKind.PHASE_MISMATCH,
                message="an explore turn may only call search_tools / inspect_tool",
            )
        )
    return Turn(
        think=think,
        phase=phase,
        phase_inferred=phase_inferred,
        calls=calls,
        answer=answer,
        errors=errors,
        text=text,
    )


def _dump_json(value: Any) -> str:
    # "<" inside JSON strings is written as \u003c (valid JSON), so no value can open or close a
    # tag.
    return json.dumps(value, ensure_ascii=False, default=str).replace("<", "\\u003c")


def render_turn(turn: Turn, *, include_inferred_phase: bool = True) -> str:
    """Render a turn in the canonical grammar (the inverse of :func:`parse_turn`)."""
    parts: list[str] = []
    if turn.think is not None:
        parts.append(f"<think>{turn.think}</think>")
    if turn.phase is not None and (include_inferred_phase or not turn.phase_inferred):
        parts.append(f"<phase>{turn.phase}</phase>")
    for call in turn.calls:
        parts.append(
            f"<tool_call>{_dump_json({'name': call.name, 'arguments': call.arguments})}</tool_call>"
        )
    if turn.answer is not None and not turn.calls:
        parts.append(f"<answer>{turn.answer}</answer>")
    return "\n".join(parts)


class Observation(BaseModel):
    """One ``<tool_response>`` block read back from a tool message."""

    name: str
    id: str
    content: Any


def render_observations(results: Sequence[ToolResult]) -> str:
    """Render one turn's results as the tool message: one block per call, in call order."""
    return "\n".join(
        f'<tool_response name="{result.name}" id="{result.call_id}">'
        f"{_dump_json(result.observation())}</tool_response>"
        for result in results
    )


def parse_observations(text: str) -> list[Observation]:
    """Read the ``<tool_response>`` blocks of a tool message (JSON bodies; raw text if not JSON)."""
    observations = []
    for match in _RESPONSE.finditer(text):
        body = match.group("body")
        try:
            content = json.loads(body)
        except (ValueError, RecursionError):
            content = body
        observations.append(
            Observation(name=match.group("name"), id=match.group("id"), content=content)
        )
    return observations


def turn_from_openai(
    content: str | None,
    tool_calls: Sequence[dict[str, Any]] | None,
    *,
    id_prefix: str = "call",
    meta_tools: Iterable[str] = META_TOOLS,
) -> Turn:
    """Map an OpenAI-style assistant message (``content`` + structured ``tool_calls``) to a turn.

    Servers such as ``vllm serve --tool-call-parser hermes`` return calls structured; the text part
    may still carry ``<think>``/``<phase>``. Structured calls with unparseable arguments become
    format errors exactly as textual ones do.
    """
    if not tool_calls:
        return parse_turn(content or "", id_prefix=id_prefix, meta_tools=meta_tools)
    blocks = []
    for call in tool_calls:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError):
                blocks.append(f"<tool_call>{arguments}</tool_call>")
                continue
        blocks.append(
            "<tool_call>"
            f"{_dump_json({'name': function.get('name'), 'arguments': arguments})}</tool_call>"
        )
    content = content or ""
    text = _without_calls(content, _call_blocks(content)).strip()
    return parse_turn(
        "\n".join([text, *blocks]).strip(), id_prefix=id_prefix, meta_tools=meta_tools
    )

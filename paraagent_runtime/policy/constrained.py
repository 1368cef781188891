"""Grammar-constrained decoding of ParaAct turns: the one home of the turn grammar and its default.

The agent describes each turn's format (:class:`TurnFormat`: the mode, K_max and the callable
tools with their schemas) on ``SamplingParams.turn_format``. A local backend that constrains
(:data:`DEFAULT_CONSTRAINED`) turns it into a Lark grammar for llguidance (:func:`turn_grammar`,
cached per format): optional ``<think>``, then tool calls or an ``<answer>``. In ``paraact`` and
``decoupled`` a tool turn opens with a ``<phase>`` tag, an explore turn calls only meta-tools (in
``decoupled`` an execute turn calls none), and a turn holds 1..K_max calls; in ``react`` there
are no phase tags and one call per turn. Each call is one JSON object per tool: ``name`` that
tool's name, ``arguments`` its JSON schema. A schema llguidance rejects (look-around patterns,
unknown formats) falls back to a free JSON object for that tool, counted on the grammar and
logged.

While decoding, a :class:`TurnConstraint` (one per generated turn) masks the tokens the grammar
does not allow before each pick and advances by the picked token. Log-probs stay those of the
model's raw distribution. Remote servers are never constrained here: ``vllm serve`` can constrain
server-side with its structured outputs (an ``extra_body`` grammar), which this runtime does not
send.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import re
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConfigError
from ..meta import META_TOOLS
from ..modes import DEFAULT_MODE, AgentMode

if TYPE_CHECKING:
    import numpy as np
    from llguidance import LLMatcher, LLTokenizer
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "CONSTRAINED_ENV",
    "DEFAULT_CONSTRAINED",
    "LONG_LOOP_PERIOD",
    "LOOP_PERIOD",
    "LOOP_WINDOW",
    "RELAPSE_WINDOW",
    "STRING_CHARS_PER_TOKEN",
    "TEXT_CHARS_PER_TOKEN",
    "WRAP_UP_CHARS",
    "Closers",
    "Constrainer",
    "ToolSchema",
    "TurnConstraint",
    "TurnFormat",
    "TurnGrammar",
    "constrained_by_default",
    "turn_grammar",
]

logger = logging.getLogger(__name__)

DEFAULT_CONSTRAINED: Final = True
"""Whether the local policy specs (``paraagent``, ``local[:DIR]``, ``onnx:…``, ``transformers:…``)
constrain their turns; policies built directly (training) decode freely unless asked."""

CONSTRAINED_ENV: Final = "PARAAGENT_CONSTRAINED_DECODING"
"""The environment variable that overrides :data:`DEFAULT_CONSTRAINED` for every entry point
(``run``, ``chat`` and its ``/model``, ``eval``, ``serve``): ``0``/``off`` decodes freely."""

_SWITCH_VALUES: Final = {
    "1": True,
    "on": True,
    "true": True,
    "0": False,
    "off": False,
    "false": False,
}


def constrained_by_default() -> bool:
    """Whether a local spec constrains its turns: :data:`CONSTRAINED_ENV` if set, else the default.

    Raises:
        ConfigError: the variable holds anything but 1/0, on/off or true/false.
    """
    value = os.environ.get(CONSTRAINED_ENV)
    if value is None or not value.strip():
        return DEFAULT_CONSTRAINED
    try:
        return _SWITCH_VALUES[value.strip().lower()]
    except KeyError:
        raise ConfigError(f"{CONSTRAINED_ENV}={value!r}: use 1/on/true or 0/off/false") from None


_FREE_OBJECT: Final[dict[str, Any]] = {"type": "object"}
_SCHEMA_DEFS: Final = ("$defs", "definitions")
_JSON_LAYOUT: Final[dict[str, Any]] = {
    "whitespace_flexible": False,
    "item_separator": ", ",
    "key_separator": ": ",
    "json_allow_general_unicode_escapes": True,
}
"""Calls are laid out as :func:`~paraagent_runtime.actions.render_turn` writes them (``json.dumps``
separators, no free whitespace, ``<`` escaped as ``\\u003c``)."""
TEXT_CHARS_PER_TOKEN: Final = 2
"""With a turn budget, a ``<think>`` or ``<answer>`` text holds at most this many characters per
budget token (a degenerate repetition of a 3-character token then stops at 2/3 of the budget)."""
STRING_CHARS_PER_TOKEN: Final = 1
"""With a turn budget, an unbounded string value holds at most this many characters per budget
token."""
LOOP_WINDOW: Final = 24
"""A turn loops when its last ``LOOP_WINDOW`` tokens repeat a cycle of at most
:data:`LOOP_PERIOD` tokens ("thethethe…", "”””…")."""
LOOP_PERIOD: Final = 16
LONG_LOOP_PERIOD: Final = 32
"""Longer cycles (a phrase repeated) count once their last ``2 * period`` tokens repeat them."""
RELAPSE_WINDOW: Final = 8
"""After a loop was broken, a new cycle of at most ``RELAPSE_WINDOW // 2`` tokens counts once
the last ``RELAPSE_WINDOW`` tokens repeat it: a model that drifts from one loop into the next
("9999…2222…4444…") is stopped sooner each time."""
WRAP_UP_CHARS: Final = 8
"""In a degenerate turn (a loop was broken, or a string reached its length bound), a string
value of at least this many characters is closed at the first chance (:class:`TurnConstraint`)."""

_UNESCAPED_QUOTE = re.compile(r'(?<!\\)"')
_TEXT_TAGS: Final = ("think", "answer")


@dataclass(frozen=True, eq=False)
class Closers:
    """What ends the text a looping turn is stuck in.

    Inside a JSON string only an unescaped ``"`` ends it (the grammar allows no other); inside
    ``<think>`` or ``<answer>`` text only its closing tag does, spelled out token by token (a
    preference for any ``<`` token let a degenerate model write ``</thinker>`` and go on).

    Attributes:
        quote: One boolean per token id: its text holds an unescaped ``"``.
        container: One boolean per token id: its text holds a ``]`` or a ``}``.
        closing_tags: The token ids of ``</think>``, ``</answer>`` and ``</tool_call>``, by tag
            name.
    """

    quote: np.ndarray
    container: np.ndarray
    closing_tags: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, tokenizer: PreTrainedTokenizerBase) -> Closers:
        """The closers of ``tokenizer``'s vocabulary (byte-level tokens keep ``"`` and ``]``)."""
        import numpy as np

        pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        texts = [piece or "" for piece in pieces]
        quote = np.fromiter((bool(_UNESCAPED_QUOTE.search(t)) for t in texts), bool, len(texts))
        container = np.fromiter(("]" in t or "}" in t for t in texts), bool, len(texts))
        closing_tags = {
            tag: tuple(tokenizer.encode(f"</{tag}>", add_special_tokens=False))
            for tag in (*_TEXT_TAGS, "tool_call")
        }
        return cls(quote, container, closing_tags)

    @staticmethod
    def open_text(turn_text: str) -> str | None:
        """The tag (``think``/``answer``) whose text the end of ``turn_text`` is in, if any."""
        for tag in _TEXT_TAGS:
            if turn_text.rfind(f"<{tag}>") > turn_text.rfind(f"</{tag}>"):
                return tag
        return None


_KEPT_MATCHERS: Final = 64
"""Compiled grammars a constrainer keeps: one per recent turn format (toolset)."""


class ToolSchema(BaseModel):
    """A callable tool as the grammar sees it: its name and its arguments' JSON schema."""

    model_config = ConfigDict(frozen=True)

    name: str
    parameters: dict[str, Any] = Field(default_factory=lambda: dict(_FREE_OBJECT))


class TurnFormat(BaseModel):
    """What one turn may contain: the agent mode, K_max and the tools callable now."""

    model_config = ConfigDict(frozen=True)

    mode: AgentMode = DEFAULT_MODE
    max_calls: int = Field(default=8, ge=1)
    tools: tuple[ToolSchema, ...] = ()
    max_tokens: int | None = Field(default=None, ge=1)
    """The turn's token budget. When set, free text and string values are bounded (see
    :func:`turn_grammar`) so that a model stuck repeating itself still closes its turn."""


@dataclass(frozen=True)
class TurnGrammar:
    """A turn format's Lark grammar (llguidance dialect) and the tools whose schemas fell back."""

    lark: str
    fallbacks: tuple[str, ...]


def turn_grammar(turn_format: TurnFormat) -> TurnGrammar:
    """The grammar of ``turn_format``'s turns (cached per format).

    With a token budget (``max_tokens``), a ``<think>`` or ``<answer>`` text holds at most
    :data:`TEXT_CHARS_PER_TOKEN` characters per budget token, and a string value the schema
    leaves unbounded at most :data:`STRING_CHARS_PER_TOKEN`; an object schema that does not say
    whether it takes keys beyond its ``properties`` takes none. A small model that degenerates
    into repeating one token ("thethethe…") then writes a complete turn, which the agent can run
    and answer, instead of a turn cut at the budget inside a string (a format error).

    Raises:
        UserError: llguidance (the ``local`` extra) is not installed.
    """
    return _cached_grammar(turn_format.model_dump_json())


@functools.lru_cache(maxsize=64)
def _cached_grammar(key: str) -> TurnGrammar:
    turn_format = TurnFormat.model_validate_json(key)
    budget = turn_format.max_tokens
    text = f"{{0,{TEXT_CHARS_PER_TOKEN * budget}}}" if budget else "*"
    fallbacks: list[str] = []
    # A suffix rule ends at the first occurrence of its suffix: free text up to the closing tag.
    lines = [
        "start: think? turn",
        'think: "<think>" think_text NL?',
        rf'think_text[suffix="</think>"]: /(.|\n){text}/',
        'answer: "<answer>" answer_text',
        rf'answer_text[suffix="</answer>"]: /(.|\n){text}/',
        r"NL: /\n/",
    ]
    calls: list[str] = []
    meta: list[str] = []
    string_chars = STRING_CHARS_PER_TOKEN * budget if budget else None
    for index, tool in enumerate(turn_format.tools):
        schema, fell_back = _call_schema(tool, string_chars)
        if fell_back:
            fallbacks.append(tool.name)
        rule = f"call_{index}"
        lines.append(f"{rule}: %json {json.dumps(schema, ensure_ascii=False)}")
        calls.append(rule)
        if tool.name in META_TOOLS:
            meta.append(rule)
    turns = []
    if turn_format.mode == "react":
        if calls:
            lines.append(_block("any_call", calls))
            turns.append("any_call")
        turns.append("answer")
    else:
        more = turn_format.max_calls - 1
        # Decoupled mode keeps exploring out of execute turns (the agent refuses such searches).
        execute = [r for r in calls if r not in meta] if turn_format.mode == "decoupled" else calls
        for phase, rules in (("explore", meta), ("execute", execute)):
            if rules:
                lines.append(_block(f"{phase}_call", rules))
                lines.append(
                    f'{phase}: "<phase>{phase}</phase>" NL? {phase}_call (NL? {phase}_call)'
                    f"{{0,{more}}}"
                )
                turns.append(phase)
        # An answer may follow a phase tag, but only one of a phase the turn could open: once a
        # decoupled episode has executed, "<phase>explore</phase>" would lead only into an answer.
        tags = [f'"<phase>{phase}</phase>"' for phase in turns]
        if tags:
            lines.append(f"phase: ({' | '.join(tags)}) NL?")
        turns.append("phase? answer" if tags else "answer")
    lines.insert(1, "turn: " + " | ".join(turns))
    if fallbacks:
        logger.warning(
            "constrained decoding: %d tool schema(s) rejected by llguidance, their arguments are "
            "free JSON objects: %s",
            len(fallbacks),
            ", ".join(fallbacks),
        )
    return TurnGrammar("\n".join(lines) + "\n", tuple(fallbacks))


def _block(rule: str, alternatives: list[str]) -> str:
    return f'{rule}: "<tool_call>" ({" | ".join(alternatives)}) "</tool_call>"'


def _call_schema(tool: ToolSchema, string_chars: int | None) -> tuple[dict[str, Any], bool]:
    """The JSON schema of one call of ``tool``, and whether its arguments fell back to free.

    ``string_chars`` bounds the strings the schema leaves unbounded (``None``: no bound). The
    bound is best-effort: a schema it makes unsatisfiable (one that requires a key it does not
    declare, once closed) is used as written.
    """
    written = copy.deepcopy(tool.parameters) if tool.parameters else dict(_FREE_OBJECT)
    tries = [written]
    if string_chars is not None and tool.parameters:
        bounded = copy.deepcopy(written)
        _bound(bounded, string_chars)
        tries.insert(0, bounded)
    for arguments in tries:
        # References point at the root ("#/$defs/X"): the definitions move to the call's root.
        defs = {key: arguments.pop(key) for key in _SCHEMA_DEFS if key in arguments}
        schema = _wrap(tool.name, arguments, defs)
        if _schema_error(schema) is None:
            return schema, False
    return _wrap(tool.name, dict(_FREE_OBJECT), {}), True


_SUBSCHEMA_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS: Final = ("properties", "patternProperties", *_SCHEMA_DEFS)
_SUBSCHEMA_VALUES: Final = ("items", "additionalProperties", "not")


def _bound(schema: Any, string_chars: int) -> None:
    """Bound, in place, every string ``schema`` leaves unbounded and close its open objects.

    A string schema without ``maxLength`` (and without ``enum``/``const``, which bound it
    already) gets ``maxLength = string_chars``; an object schema with ``properties`` but no
    ``additionalProperties`` gets ``additionalProperties: false``.
    """
    if not isinstance(schema, dict):
        return
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "string" in kinds and not {"maxLength", "enum", "const"} & schema.keys():
        schema["maxLength"] = string_chars
    if "properties" in schema and "additionalProperties" not in schema:
        schema["additionalProperties"] = False
    for key in _SUBSCHEMA_LISTS:
        for item in schema.get(key) or ():
            _bound(item, string_chars)
    for key in _SUBSCHEMA_MAPS:
        for item in (schema.get(key) or {}).values():
            _bound(item, string_chars)
    for key in _SUBSCHEMA_VALUES:
        _bound(schema.get(key), string_chars)


def _wrap(name: str, arguments: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"const": name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
        "x-guidance": _JSON_LAYOUT,
        **defs,
    }


def _schema_error(schema: dict[str, Any]) -> str | None:
    """The error llguidance reports for ``schema``, or ``None`` when it compiles."""
    from llguidance import LLMatcher

    try:
        grammar = LLMatcher.grammar_from_json_schema(schema)
    except ValueError as exc:
        return str(exc)
    is_error, messages = LLMatcher.validate_grammar_with_warnings(grammar)
    return messages[0] if is_error else None


class _CallScanner:
    """Where the text of a turn is inside its ``<tool_call>`` JSON: in a string, how long.

    Fed the turn's text piece by piece; ``bound`` is the string length that marks a degenerate
    turn (no natural string of the demonstrations or trajectories comes near it).
    """

    _OPEN, _CLOSE = "<tool_call>", "</tool_call>"

    def __init__(self, bound: int | None) -> None:
        self.bound = bound
        self.in_call = False
        self.in_string = False
        self.string_chars = 0
        self.hit_bound = False
        self._depth = 0
        self._escaped = False
        self._tail = ""

    def feed(self, text: str) -> bool:
        """Move past ``text``; returns whether it closed a call's JSON (its outermost bracket)."""
        closed = False
        for char in text:
            if self.in_call and self.in_string:
                if self._escaped or char == "\\":
                    self._escaped = not self._escaped
                elif char == '"':
                    self.in_string = False
                    continue
                self.string_chars += 1
                if self.bound is not None and self.string_chars >= self.bound:
                    self.hit_bound = True
                continue
            self._tail = (self._tail + char)[-len(self._CLOSE) :]
            if not self.in_call:
                self.in_call = self._tail.endswith(self._OPEN)
            elif char == '"':
                self.in_string, self.string_chars = True, 0
            elif char in "{[":
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
                closed = closed or self._depth == 0
            elif self._tail.endswith(self._CLOSE):
                self.in_call, self._depth = False, 0
        return closed


class TurnConstraint:
    """One turn's grammar state while it is generated: which tokens may come next.

    Once the turn is complete only the end tokens are allowed; the constraint ends with one.
    A turn that loops (its last :data:`LOOP_WINDOW` tokens repeat a cycle of at most
    :data:`LOOP_PERIOD` tokens; longer cycles and relapses: :func:`_loop_cycle`) may not use
    that cycle's tokens again in this turn, unless the
    grammar allows nothing else: greedy decoding of a small model otherwise repeats one token
    until the budget cuts the turn inside a string or a ``<think>`` (a format error). Turns that
    do not loop are decoded exactly as before.

    With ``closers``, the token right after a loop is also one that ends the text the loop is
    in when the grammar allows one (a ``"`` in a JSON string; in ``<think>``/``<answer>`` text
    the closing tag, token by token): banning the loop alone let a small model drift into the
    next loop. And once a turn is degenerate (a loop was broken, or a string of a call reached
    ``string_bound`` characters) it is wrapped up: string values close after
    :data:`WRAP_UP_CHARS` characters, arrays and objects close rather than take another item, a
    call whose JSON closed gets its ``</tool_call>`` spelled out, and the turn ends as soon as
    it may, each whenever the grammar allows it. Otherwise garbage that never repeats exactly
    filled one string to its bound and ran out of budget in the next.

    Args:
        matcher: the llguidance matcher of the turn's grammar.
        vocab_size: the number of token ids the tokenizer has.
        end_ids: the token ids that end a turn.
        closers: the tokenizer's :class:`Closers` and a function decoding token ids to text.
        string_bound: the length bound of the grammar's unbounded strings, if it has one.
    """

    def __init__(
        self,
        matcher: LLMatcher,
        vocab_size: int,
        end_ids: Sequence[int],
        closers: tuple[Closers, Callable[[list[int]], str]] | None = None,
        string_bound: int | None = None,
    ) -> None:
        from llguidance.numpy import allocate_token_bitmask

        self._matcher = matcher
        self._vocab_size = vocab_size
        self._end_ids = frozenset(end_ids)
        self._bitmask = allocate_token_bitmask(1, vocab_size)
        self.active = not matcher.is_error()
        self._recent: deque[int] = deque(maxlen=3 * LONG_LOOP_PERIOD)
        self.banned: set[int] = set()
        """Tokens of the loops broken in this turn."""
        self._closers = closers
        self._turn: list[int] = []
        self._closing: np.ndarray | None = None
        self._forced: deque[int] = deque()
        """The rest of a closing tag being spelled out (after a loop in think/answer text, or a
        degenerate call's JSON)."""
        self._scanner = _CallScanner(string_bound)
        self._ends: np.ndarray | None = None
        """The end tokens as a mask over the vocabulary (made when a turn is first wrapped up)."""

    def allowed(self) -> np.ndarray | None:
        """Which token ids may come next (booleans, one per tokenizer id); ``None`` when inactive.

        A constraint is inactive once an end token was picked or the grammar failed: every token
        is allowed.
        """
        if not self.active:
            return None
        import numpy as np
        from llguidance.numpy import fill_next_token_bitmask

        fill_next_token_bitmask(self._matcher, self._bitmask, 0)
        bits = np.unpackbits(self._bitmask.view(np.uint8), bitorder="little")
        allowed = bits[: self._vocab_size].astype(bool)
        if self._forced:
            if allowed[self._forced[0]]:
                only = np.zeros_like(allowed)
                only[self._forced[0]] = True
                return only
            self._forced.clear()
        if self.banned:
            banned = np.fromiter(self.banned, dtype=np.int64)
            banned = banned[banned < len(allowed)]
            if int(allowed.sum()) > int(allowed[banned].sum()):
                allowed[banned] = False
        for preferred in self._preferred():
            chosen = allowed & preferred[: len(allowed)]
            if chosen.any():
                return chosen
        return allowed

    @property
    def degenerate(self) -> bool:
        """Whether this turn broke a loop or filled a string to its bound."""
        return bool(self.banned) or self._scanner.hit_bound

    def _preferred(self) -> list[np.ndarray]:
        """Token sets to choose from first, in order, when the grammar allows one of them."""
        import numpy as np

        if self._closing is not None:
            return [self._closing]
        if self._closers is None or not self.degenerate:
            return []
        closers, _ = self._closers
        if self._ends is None:
            self._ends = np.zeros(len(closers.quote), dtype=bool)
            self._ends[[i for i in self._end_ids if i < len(self._ends)]] = True
        scanner = self._scanner
        if scanner.in_call and scanner.in_string:
            if scanner.string_chars < WRAP_UP_CHARS:
                return []
            # '"]' before '",': a closing quote that also closes the array or object.
            return [closers.quote & closers.container, closers.quote]
        return [self._ends, closers.container] if scanner.in_call else [self._ends]

    def mask(self, scores: np.ndarray) -> np.ndarray:
        """``scores`` (one row of logits or log-probs) with the disallowed tokens at ``-inf``.

        Ids past the tokenizer's (padding of the model's vocabulary) are disallowed too.
        """
        allowed = self.allowed()
        if allowed is None:
            return scores
        import numpy as np

        masked = np.full_like(scores, -np.inf)
        size = min(len(allowed), scores.shape[-1])
        keep = np.flatnonzero(allowed[:size])
        masked[keep] = scores[keep]
        return masked

    def forced(self) -> list[int]:
        """The tokens the grammar allows as the only continuation from here (may be empty)."""
        if not self.active:
            return []
        return list(self._matcher.compute_ff_tokens())

    def advance(self, token: int) -> None:
        """Move past the picked ``token``; an end token, or one the grammar refuses, ends it."""
        if not self.active:
            return
        if not self._matcher.consume_token(token):
            logger.debug("constrained decoding stopped: %s", self._matcher.get_error())
            self.active = False
        elif token in self._end_ids:
            self.active = False
        else:
            self._closing = None
            if self._forced and self._forced[0] == token:
                self._forced.popleft()
            else:
                self._forced.clear()
            self._turn.append(token)
            self._recent.append(token)
            if self._closers is not None:
                closed_call = self._scanner.feed(self._closers[1]([token]))
                if closed_call and self.degenerate:
                    # Otherwise a "><" token closed the call and opened another.
                    self._forced = deque(self._closers[0].closing_tags["tool_call"])
            cycle = _loop_cycle(list(self._recent), relapse=bool(self.banned))
            if cycle:
                logger.debug("constrained decoding: a loop of %s broken", cycle)
                self.banned.update(cycle)
                if self._closers is not None:
                    closers, decode = self._closers
                    tag = closers.open_text(decode(self._turn))
                    if tag is None:
                        self._closing = closers.quote
                    else:
                        self._forced = deque(closers.closing_tags[tag])


def _loop_cycle(recent: list[int], *, relapse: bool = False) -> set[int]:
    """The tokens of the shortest cycle the end of ``recent`` repeats, if it loops.

    A cycle of ``period`` tokens counts when the last ``window`` tokens equal the ``window``
    before them shifted by ``period``: ``window`` is :data:`LOOP_WINDOW` up to
    :data:`LOOP_PERIOD`, ``2 * period`` up to :data:`LONG_LOOP_PERIOD`, and
    :data:`RELAPSE_WINDOW` for short cycles once a loop was broken in the turn (``relapse``).
    """
    for period in range(1, LONG_LOOP_PERIOD + 1):
        if relapse and 2 * period <= RELAPSE_WINDOW:
            window = RELAPSE_WINDOW
        else:
            window = LOOP_WINDOW if period <= LOOP_PERIOD else 2 * period
        if len(recent) < window + period:
            continue
        if recent[-window:] == recent[-window - period : -period]:
            return set(recent[-period:])
    return set()


class Constrainer:
    """Builds each turn's :class:`TurnConstraint` for one tokenizer.

    Args:
        tokenizer: the policy's (fast) Hugging Face tokenizer.
        eos_ids: the token ids that end a turn; the grammar allows them once the turn is complete.

    Raises:
        UserError: llguidance (the ``local`` extra) is not installed.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, eos_ids: list[int]) -> None:
        from ..errors import UserError

        try:
            import llguidance.hf
        except ImportError as exc:
            raise UserError(
                "constrained decoding needs llguidance: pip install 'paraagent[local]'"
            ) from exc
        self.tokenizer = tokenizer
        self._end_ids = tuple(eos_ids)
        self._tokenizer: LLTokenizer = llguidance.hf.from_tokenizer(
            tokenizer, eos_token=list(eos_ids)
        )
        self.vocab_size = len(tokenizer)
        self._closers = Closers.of(tokenizer)
        self._matchers: OrderedDict[str, LLMatcher] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, turn_format: TurnFormat) -> TurnConstraint:
        """A fresh constraint for one turn of ``turn_format`` (blocking: compiles on a miss)."""
        key = turn_format.model_dump_json()
        with self._lock:
            matcher = self._matchers.pop(key, None)
        if matcher is None:
            from llguidance import LLMatcher

            grammar = LLMatcher.grammar_from_lark(_cached_grammar(key).lark)
            matcher = LLMatcher(self._tokenizer, grammar, log_level=0)
            if matcher.is_error():
                logger.warning("constrained decoding off for these turns: %s", matcher.get_error())
        with self._lock:
            self._matchers[key] = matcher
            while len(self._matchers) > _KEPT_MATCHERS:
                self._matchers.popitem(last=False)
        budget = turn_format.max_tokens
        return TurnConstraint(
            matcher.deep_copy(),
            self.vocab_size,
            self._end_ids,
            closers=(self._closers, self.tokenizer.decode),
            string_bound=STRING_CHARS_PER_TOKEN * budget if budget else None,
        )

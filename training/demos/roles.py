"""The four demonstration roles and the state they share during one episode.

Each role is a Protocol with one async method, so a role can be played by a script or by a
policy. The defaults here are *privileged scripted* roles: they read the task's gold call DAG
(ToolEnv's privileged task information, declared in the dataset card) to decide what to do, and
what they *write* uses what the episode has shown so far — the user query, the tool cards
returned by searches and the tool results — with two declared exceptions: a need names what the
request's own values are (the gold argument's name: "flight number" for "CX704"), and a search
retried after a miss guesses the tool's name. The first need and search repeat the request's
words, so the habit carries over to tools the policy has never seen.

Three choices change what the demonstrations teach (:data:`NEED_WORDS`, :data:`FIRST_SEARCHES`,
:data:`ANSWER_NOTES`): needs worded from the request or from the gold tool's description (the
demonstrations of ParaAgent-135M v1 and v2), a first search per need or one search with the whole
request, and an answer turn listing facts by label or with the result field each was read from.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from paraagent_runtime import (
    SEARCH_TOOLS,
    GoldCall,
    RunError,
    Task,
    ToolSpec,
    check_answer,
    model_facing_name,
    resolve_binding,
    resolve_path,
)

__all__ = [
    "DemoAbort",
    "DemoState",
    "Executor",
    "Explorer",
    "Pending",
    "Plan",
    "Planner",
    "RoleAction",
    "ScriptedExecutor",
    "ScriptedExplorer",
    "ScriptedPlanner",
    "ScriptedVerifier",
    "Verifier",
    "ANSWER_NOTES",
    "FIRST_SEARCHES",
    "NEED_WORDS",
    "AnswerNotes",
    "FirstSearch",
    "NeedWords",
    "need_phrase",
    "request_need",
    "request_pieces",
    "request_query",
]

Recovery = Literal["bad_arguments", "wrong_tool"]
NeedWords = Literal["request", "description"]
FirstSearch = Literal["need", "request"]
NEED_WORDS: tuple[NeedWords, ...] = ("request", "description")
"""How a need is worded: ``request``, the piece of the request the tool serves (the policy can
learn to write it from what it sees); ``description``, the first clause of the gold tool's
description (what ParaAgent-135M v1 and v2 learned from: it names the tool the policy must know)."""
AnswerNotes = Literal["labels", "sources"]
ANSWER_NOTES: tuple[AnswerNotes, ...] = ("labels", "sources")
"""What the answer turn's reasoning lists: ``labels``, the first four facts by what they are
(``temperature in Rome = 21.5``); ``sources``, every fact with the result field it was read
from (``… from weather__get_current_weather(Rome).temperature``): reading a result the policy
has never seen is then shown on every demo."""
FIRST_SEARCHES: tuple[FirstSearch, ...] = ("need", "request")
"""The episode's first search: ``need``, one per need; ``request``, one with the whole request
(nothing to choose, so the habit transfers; picking among the cards is what is left to learn),
then one per need for the tools it did not surface."""
_STOP = frozenset(
    "a an the of in on at for by to from and or its it with as is are be up one two this that all "
    "given right now".split()
)

_NAME_VERBS = frozenset({"get", "list", "fetch", "looku"})
"""Stems of the verbs tool names start with: "when I get there" says nothing about get_time."""


class DemoAbort(RunError):
    """A role cannot continue the demonstration (the episode is rejected)."""


@dataclass(frozen=True)
class Pending:
    """One call of the last turn, with what the roles meant by it."""

    name: str
    arguments: dict[str, Any]
    kind: Literal["search", "inspect", "gold", "wrong"]
    node: str | None = None
    tool: str | None = None


@dataclass
class RoleAction:
    """What a role wants the next assistant turn to be: calls, or a final answer."""

    role: str
    think: str
    calls: list[Pending] = field(default_factory=list)
    answer: str | None = None
    phase: Literal["explore", "execute"] | None = None


@dataclass
class Plan:
    """The planner's decomposition: sub-goals per DAG level and the need behind each tool."""

    levels: list[list[str]]
    needs: dict[str, str]
    nodes: dict[str, GoldCall]
    lazy: bool
    recovery: Recovery | None


@dataclass
class DemoState:
    """What the roles know during one episode (the episode's observations plus the plan)."""

    task: Task
    plan: Plan
    specs: dict[str, ToolSpec]
    rng: random.Random
    mode: str
    top_k: int
    loaded: set[str] = field(default_factory=set)
    outputs: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    wrong: dict[str, tuple[str, Any]] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    searches: dict[str, int] = field(default_factory=dict)
    request_searched: bool = False
    pending: list[Pending] = field(default_factory=list)
    executed: bool = False
    recovery_used: bool = False
    mistake_turns: list[int] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)

    def name_of(self, tool: str) -> str:
        """The model-facing name of a tool id."""
        return model_facing_name(tool)

    def ready(self) -> list[str]:
        """Gold nodes not done yet whose dependencies are all done, in DAG order."""
        return [
            node
            for level in self.plan.levels
            for node in level
            if node not in self.outputs
            and all(dep in self.outputs for dep in self.plan.nodes[node].depends_on)
        ]


class Planner(Protocol):
    """Splits the task into sub-goals (DAG levels) and names the need behind each tool."""

    async def plan(self, task: Task, rng: random.Random) -> Plan:
        """Return the plan of ``task``."""
        ...


class Explorer(Protocol):
    """Finds the tools the next steps need (parallel ``search_tools``, ``inspect_tool``)."""

    async def explore(self, state: DemoState) -> RoleAction | None:
        """The next explore turn, or ``None`` when every needed tool is loaded."""
        ...


class Executor(Protocol):
    """Runs the ready level of the plan as one parallel batch; retries or switches on errors."""

    async def execute(self, state: DemoState) -> RoleAction | None:
        """The next execute turn, or ``None`` when the plan is complete."""
        ...


class Verifier(Protocol):
    """Checks batches for dependent calls and the final answer against the observed facts."""

    def review(self, state: DemoState, batch: list[Pending]) -> list[str]:
        """Flags for one batch (dependent calls inside it, redundant calls)."""
        ...

    async def answer(self, state: DemoState) -> RoleAction:
        """The final answer turn, verified against the observations."""
        ...


def need_phrase(spec_description: str, *, max_words: int = 8) -> str:
    """A short need derived from a tool description: its first clause, lower-cased."""
    clause = re.split(r"[:;(]|\. ", spec_description.strip(), maxsplit=1)[0].rstrip(".,; ")
    words = clause.split()
    return " ".join(words[:max_words]).lower().rstrip(".,; ")


def request_query(query: str, *, max_words: int = 24) -> str:
    """The user's request as a search query: its words less stop words, ``max_words`` at most."""
    return " ".join(_words(query)[:max_words]) or query.strip()


def request_pieces(query: str) -> list[str]:
    """The request cut into sentences, then clauses (commas, colons, dashes, "and").

    Pieces of stop words only are dropped; a request with no other word is one piece.
    """
    return [
        re.sub(r"^and\s+", "", piece.strip(), flags=re.IGNORECASE)
        for sentence in re.split(r"(?<=[.?!])\s+", query.strip())
        for piece in re.split(r"[,;:]\s+|\s+-\s+|\s+and\s+", sentence)
        if _words(piece)
    ] or [query.strip()]


def request_need(query: str, tool_text: str, *, max_words: int = 10) -> str:
    """The part of the user's request a tool serves, in the request's own words.

    The request is cut into pieces (sentences, then parts between commas, colons or "and"); the
    piece sharing the most word stems with ``tool_text`` (the tool's name and description, which
    only chooses *which* words of the request to repeat) is returned lower-cased, at most
    ``max_words`` words. With no shared stem, the request's first piece. Written this way, a
    need never carries words the episode has not shown, so the habit transfers to unseen tools.
    """
    tool_stems = {_stem(word) for word in _words(tool_text)} - _NAME_VERBS
    pieces = request_pieces(query)

    def shared(piece: str) -> int:
        return len({_stem(word) for word in _words(piece)} & tool_stems)

    best = max(pieces, key=shared)
    if shared(best) == 0:
        best = pieces[0]
    words = best.rstrip(".?!,; ").split()
    return " ".join(words[:max_words]).lower()


def _words(text: str) -> list[str]:
    return [
        word
        for word in re.findall(r"[a-z0-9\-']+", text.lower().replace("_", " "))
        if word not in _STOP
    ]


def _stem(word: str) -> str:
    return word[:5]


def _query(phrase: str, rng: random.Random) -> str:
    words = _words(phrase)
    if len(words) > 3 and rng.random() < 0.5:
        words.pop(rng.randrange(1, len(words)))
    return " ".join(words[:6]) or phrase


def _reformulation(tool: str, spec: ToolSpec | None, *, with_provider: bool = False) -> str:
    provider, _, name = tool.partition("/")
    words = name.replace("_", " ") + (f" {provider}" if with_provider else "")
    return f"{words} {spec.category.lower()}" if spec and spec.category else words


def _short_json(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ScriptedPlanner:
    """Plans from the gold DAG; draws the episode's style (eager/lazy, recovery) from ``rng``."""

    def __init__(
        self,
        specs: dict[str, ToolSpec],
        *,
        lazy_prob: float,
        recovery_prob: float,
        need_words: NeedWords = "request",
    ) -> None:
        self.specs = specs
        self.lazy_prob = lazy_prob
        self.recovery_prob = recovery_prob
        self.need_words = need_words

    async def plan(self, task: Task, rng: random.Random) -> Plan:
        """Levels of the gold DAG, one need per distinct tool, and the drawn style."""
        nodes = {call.id: call for call in task.calls}
        needs = {tool: self._need(task, tool) for tool in task.tools}
        lazy = task.depth > 1 and rng.random() < self.lazy_prob
        recovery: Recovery | None = None
        if rng.random() < self.recovery_prob:
            recovery = "wrong_tool" if rng.random() < 0.5 else "bad_arguments"
        return Plan(levels=task.levels(), needs=needs, nodes=nodes, lazy=lazy, recovery=recovery)

    def _need(self, task: Task, tool: str) -> str:
        spec = self.specs.get(tool)
        if self.need_words == "description":
            return need_phrase(spec.description) if spec else tool
        name = tool.partition("/")[2]
        values = _request_values(task, tool)
        text = f"{name} {spec.description if spec else ''} {' '.join(v for _, v in values)}"
        piece = request_need(task.query, text)
        kinds = list(dict.fromkeys(kind for kind, _ in values))[:2]
        return f"{', '.join(kinds)}: {piece}" if kinds else piece


def _request_values(task: Task, tool: str) -> list[tuple[str, str]]:
    """The values of ``tool``'s calls that the user wrote, with what each is (``flight number``).

    The kind of a value the user wrote ("CX704" is a flight number) is world knowledge the policy
    brings to any tool; it is what turns "where is CX704 bound" into a search a card can match.
    """
    query = task.query.lower()
    return [
        (key.replace("_", " "), value)
        for call in task.calls
        if call.tool == tool
        for key, value in call.arguments.items()
        if key not in call.bindings
        and isinstance(value, str)
        and len(value) >= 2
        and value.lower() in query
    ]


class ScriptedExplorer:
    """Searches with the request's words for each need; on a miss, with a guessed tool name.

    Args:
        first_search: ``request`` opens the episode with one search for the whole request
            (see :data:`FIRST_SEARCHES`).
        need_words: ``description`` searches as the demonstrations of ParaAgent-135M v1 and v2
            did: once per tool even when two tools share a need, and a retry names the tool's
            provider too. ``request`` searches once per distinct need.
    """

    def __init__(
        self, *, first_search: FirstSearch = "need", need_words: NeedWords = "request"
    ) -> None:
        self.first_search = first_search
        self.need_words = need_words

    async def explore(self, state: DemoState) -> RoleAction | None:
        """Search for the tools the next step needs that no card has shown yet."""
        plan = state.plan
        if state.plan.lazy and state.mode == "paraact":
            wanted_nodes = state.ready()
        elif state.executed:
            return None
        else:
            wanted_nodes = [node for level in plan.levels for node in level]
        missing = list(
            dict.fromkeys(
                plan.nodes[node].tool
                for node in wanted_nodes
                if state.name_of(plan.nodes[node].tool) not in state.loaded
            )
        )
        if not missing:
            return None
        if state.mode == "react":
            missing = missing[:1]
        if self.first_search == "request" and not state.request_searched:
            state.request_searched = True
            arguments: dict[str, Any] = {"query": request_query(state.task.query)}
            if state.top_k != 5:
                arguments["top_k"] = state.top_k
            return RoleAction(
                role="explorer",
                think="I search with the request's own words, then keep the tools that fit.",
                calls=[Pending(SEARCH_TOOLS, arguments, "search", tool=missing[0])],
                phase="explore",
            )
        calls = []
        retry = []
        by_tool = self.need_words == "description"
        keys = list(dict.fromkeys(tool if by_tool else plan.needs[tool] for tool in missing))
        needs = [plan.needs[key] if by_tool else key for key in keys]
        for key, need in zip(keys, needs, strict=True):
            tools = [key] if by_tool else [tool for tool in missing if plan.needs[tool] == need]
            tries = max(state.searches.get(tool, 0) for tool in tools)
            if tries >= 2:
                raise DemoAbort(f"the explorer could not surface {tools[0]} in two searches")
            for tool in tools:
                state.searches[tool] = tries + 1
            if tries == 0:
                query, top_k = _query(need, state.rng), state.top_k
            else:
                query = _reformulation(tools[0], state.specs.get(tools[0]), with_provider=by_tool)
                top_k = min(20, state.top_k * 2)
                retry.append(need)
            arguments = {"query": query}
            if top_k != 5:
                arguments["top_k"] = top_k
            calls.append(Pending(SEARCH_TOOLS, arguments, "search", tool=tools[0]))
        if retry:
            think = f"No card fits yet for: {'; '.join(retry)}. Searching again with other words."
        elif state.executed:
            think = (
                f"The results so far point to the next step. New tools needed: {'; '.join(needs)}."
            )
        else:
            think = f"The task needs tools for: {'; '.join(needs)}."
            if len(calls) > 1:
                think += " The searches are independent, so I run them together."
        return RoleAction(role="explorer", think=think, calls=calls, phase="explore")


class ScriptedExecutor:
    """Issues every ready call in one batch (one in react mode); handles errors and the slip."""

    async def execute(self, state: DemoState) -> RoleAction | None:
        """The next batch of gold calls, with bound arguments read from earlier results."""
        ready = [
            node
            for node in state.ready()
            if state.name_of(state.plan.nodes[node].tool) in state.loaded
        ]
        if not ready:
            return None
        if state.mode == "react":
            ready = ready[:1]
        notes: list[str] = []
        calls: list[Pending] = []
        # After a search for the whole request, say which card serves which part of it.
        choices: list[str] = []
        for node in ready:
            call = state.plan.nodes[node]
            attempts = state.attempts.get(node, 0)
            if attempts >= 3:
                raise DemoAbort(f"{node} ({call.tool}) failed three times")
            state.attempts[node] = attempts + 1
            arguments = self._arguments(state, call, notes)
            name = state.name_of(call.tool)
            if state.request_searched and attempts == 0 and node not in state.wrong:
                choices.append(f"{name} fits: {state.plan.needs[call.tool]}.")
            if node in state.errors:
                notes.append(f"{name} failed ({state.errors[node]}); calling it again correctly.")
            elif node in state.wrong:
                wrong_name, output = state.wrong[node]
                keys = ", ".join(list(output)[:4]) if isinstance(output, dict) else "other data"
                notes.append(
                    f"{wrong_name} returned {keys}, not what I need; "
                    f"{name} fits: {state.plan.needs[call.tool]}."
                )
            calls.append(Pending(name, arguments, "gold", node=node, tool=call.tool))
        if not state.executed and state.plan.recovery and not state.recovery_used:
            calls = self._slip(state, calls)
        state.executed = True
        if not notes:
            counts = Counter(call.name for call in calls)
            listing = ", ".join(
                f"{name} x{count}" if count > 1 else name for name, count in counts.items()
            )
            notes.append(
                f"Ready and independent: {listing}. One parallel batch."
                if len(calls) > 1
                else f"Ready: {listing}."
            )
        # Several calls of a batch often bind the same value; say it once.
        think = " ".join(dict.fromkeys(choices + notes))
        return RoleAction(role="executor", think=think, calls=calls, phase="execute")

    @staticmethod
    def _arguments(state: DemoState, call: GoldCall, notes: list[str]) -> dict[str, Any]:
        arguments = dict(call.arguments)
        for key, reference in call.bindings.items():
            try:
                arguments[key] = resolve_binding(state.outputs, reference)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise DemoAbort(f"cannot bind {key} from {reference}: the result lacks it") from exc
            source_tool = state.name_of(
                state.plan.nodes[reference.strip("[]").split(".", 1)[0]].tool
            )
            notes.append(f"From {source_tool}: {key} = {_short_json(arguments[key])}.")
        return arguments

    @staticmethod
    def _slip(state: DemoState, calls: list[Pending]) -> list[Pending]:
        """Inject the planned recoverable mistake into the first batch."""
        state.recovery_used = True
        state.mistake_turns.append(len(state.roles))
        target = state.rng.randrange(len(calls))
        call = calls[target]
        spec = state.specs[call.tool]  # type: ignore[index]
        if state.plan.recovery == "wrong_tool":
            sibling = _sibling(state, spec, call.arguments)
            if sibling is not None:
                properties = sibling.input_schema.get("properties") or {}
                arguments = {
                    key: value for key, value in call.arguments.items() if key in properties
                }
                slipped = Pending(sibling.name, arguments, "wrong", node=call.node, tool=sibling.id)
                return [*calls[:target], slipped, *calls[target + 1 :]]
        required = [key for key in spec.input_schema.get("required") or [] if key in call.arguments]
        if not required:
            state.plan.recovery = None
            state.mistake_turns.pop()
            return calls
        state.plan.recovery = "bad_arguments"
        dropped = {key: value for key, value in call.arguments.items() if key != required[0]}
        return [
            *calls[:target],
            Pending(call.name, dropped, "gold", node=call.node, tool=call.tool),
            *calls[target + 1 :],
        ]


def _sibling(state: DemoState, spec: ToolSpec, arguments: dict[str, Any]) -> ToolSpec | None:
    """A loaded read-only tool of the same provider whose required parameters the call provides."""
    gold = set(state.task.tools)
    for candidate in state.specs.values():
        if (
            candidate.id in gold
            or candidate.provider != spec.provider
            or candidate.name not in state.loaded
        ):
            continue
        required = set(candidate.input_schema.get("required") or [])
        if candidate.annotations.read_only and required and required <= set(arguments):
            return candidate
    return None


class ScriptedVerifier:
    """Flags dependent calls inside one batch and answers only with facts seen in the results.

    Args:
        answer_notes: What the answer turn's reasoning lists (see :data:`ANSWER_NOTES`).
    """

    def __init__(self, *, answer_notes: AnswerNotes = "labels") -> None:
        self.answer_notes = answer_notes

    def review(self, state: DemoState, batch: list[Pending]) -> list[str]:
        """Flag calls of one batch that need another call of the same batch, and repeats."""
        flags = []
        nodes = {call.node for call in batch if call.node}
        for call in batch:
            if call.node and set(state.plan.nodes[call.node].depends_on) & nodes:
                flags.append(f"dependent call {call.name} ({call.node}) in one batch")
        keys = [json.dumps([call.name, call.arguments], sort_keys=True) for call in batch]
        if len(set(keys)) < len(keys):
            flags.append("redundant call in one batch")
        return flags

    async def answer(self, state: DemoState) -> RoleAction:
        """State the answer after checking each fact against the observed outputs."""
        seen = []
        for fact in state.task.facts:
            try:
                observed = resolve_path(state.outputs, fact.source) if fact.source else None
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise DemoAbort(
                    f"fact {fact.label!r} is not in the results ({fact.source})"
                ) from exc
            if not _matches(fact.value, observed, fact.tolerance):
                raise DemoAbort(
                    f"fact {fact.label!r}: results say {observed!r}, the task {fact.value!r}"
                )
            note = f"{fact.label} = {_short_json(fact.value, 30)}"
            if self.answer_notes == "sources" and fact.source:
                note += f" from {_source(state, fact.source)}"
            seen.append(note)
        answer = state.task.gold_answer
        verdict = check_answer(state.task, answer)
        if not verdict.success:
            raise DemoAbort(f"the answer misses {', '.join(verdict.missing)}")
        shown = seen if self.answer_notes == "sources" else seen[:4]
        more = "; …" if len(seen) > len(shown) else ""
        think = f"All results are in. {'; '.join(shown)}{more}."
        return RoleAction(role="verifier", think=think, answer=answer)


def _source(state: DemoState, source: str) -> str:
    """Where a fact was read, as the episode shows it: ``tool.field.path``.

    A tool called several times is told apart by the first argument whose value differs
    between its calls: ``tool(Rome).field.path``.
    """
    node, _, path = source.partition(".")
    call = state.plan.nodes.get(node)
    if call is None:
        return source
    siblings = [other for other in state.plan.nodes.values() if other.tool == call.tool]
    varying = [
        key
        for key in call.arguments
        if len({json.dumps(other.arguments.get(key), sort_keys=True) for other in siblings}) > 1
    ]
    which = f"({_short_json(call.arguments[varying[0]], 30)})" if varying else ""
    return f"{state.name_of(call.tool)}{which}.{path}"


def _matches(expected: Any, observed: Any, tolerance: float | None) -> bool:
    if isinstance(expected, int | float) and isinstance(observed, int | float):
        return abs(float(expected) - float(observed)) <= (
            tolerance if tolerance is not None else 0.01
        )
    return str(expected).lower() in str(observed).lower()

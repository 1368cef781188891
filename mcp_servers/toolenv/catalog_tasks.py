"""Description-driven tasks over the real catalog: G1 / G2 / G3 tasks with pinned gold responses.

The built-in families (:mod:`.tasks`) have hand-written queries over hand-written tools; this
module builds tasks for any typed catalog record (botocore, Google discovery, OpenAPI, MCP
servers, …) with no LLM:

- **arguments** are sampled from each tool's input schema (:func:`.arguments.sample_arguments`),
  deterministically from the task seed;
- the **gold DAG** is run against a simulator of the task's world (schema-driven generic
  responses), and every gold response is **pinned** into the task, so the task replays exactly
  even if the generic generator or an LLM simulator later answers differently;
- **answer facts** are a few scalar fields of the gold outputs (strings and numbers that the
  arguments do not simply echo back);
- the **query** is phrased from the first sentence of each tool's description plus the argument
  values and the fields to report.

Groups: ``G1`` one tool (one call, sometimes two in parallel with other arguments); ``G2`` two or
three tools of one provider (or category) called in parallel; ``G3`` tools of several categories
with at least one dependency: a scalar output field of one tool feeds a required argument of the
same normalized name and JSON type of a tool in another category (chains of 2–3, sometimes with an
independent parallel branch).

Held-out splits are defined over catalog categories and providers by a salted hash of their names
(:func:`catalog_holdout`), so they do not depend on which other sources are installed:
``test-unseen-categories`` uses only held-out categories, ``test-unseen-tools`` only held-out
providers of seen categories, and every other split neither.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from paraagent_runtime import AnswerFact, ConfigError, PinnedResponse, Task
from paraagent_runtime.documents import split_identifier

from .arguments import sample_arguments
from .generic import canonical_arguments
from .records import ToolRecord
from .simulator import ToolEnvSimulator
from .source import ToolEnv
from .tasks import _Trace

__all__ = [
    "CATALOG_GROUPS",
    "CatalogHoldout",
    "CatalogTaskGenerator",
    "catalog_holdout",
    "catalog_task_env",
    "catalog_task_records",
    "generate_catalog_tasks",
]

CATALOG_GROUPS: tuple[str, ...] = ("G1", "G2", "G3")
UNUSABLE_QUALITY = frozenset({"crawled", "synthetic"})
"""Schema qualities without typed, real interfaces: never used for catalog tasks."""
_MAX_OUTPUT_CHARS = 8_000
_MAX_FACT_CHARS = 60
_TRIES = 40


class _Light(Protocol):
    """The light fields of a record (a :class:`ToolRecord` or a lazily loaded catalog entry)."""

    @property
    def id(self) -> str: ...

    provider: str
    category: str
    source: str
    schema_quality: str


@dataclass(frozen=True)
class CatalogHoldout:
    """Categories and providers held out of the seen splits.

    Attributes:
        categories: Only ``test-unseen-categories`` uses them.
        providers: Providers of seen categories that only ``test-unseen-tools`` uses.
    """

    categories: frozenset[str]
    providers: frozenset[str]

    def split_of(self, entry: _Light) -> str:
        """The record's split family: ``seen``, ``unseen-tools`` or ``unseen-categories``."""
        if entry.category in self.categories:
            return "unseen-categories"
        if entry.provider in self.providers:
            return "unseen-tools"
        return "seen"


def _bucket(kind: str, name: str) -> float:
    digest = hashlib.sha1(f"toolenv-holdout:{kind}:{name}".encode()).hexdigest()
    return int(digest[:8], 16) / 0xFFFFFFFF


def catalog_holdout(records: Sequence[Any], *, rate: float = 0.1) -> CatalogHoldout:
    """The held-out categories and providers of a catalog (each name in with probability ``rate``).

    A name's status depends only on the name, so adding sources never moves a seen tool into a
    held-out split.

    Raises:
        ConfigError: ``rate`` outside (0, 1).
    """
    if not 0.0 < rate < 1.0:
        raise ConfigError(f"holdout rate must be within (0, 1), got {rate}")
    light = _light(records)
    categories = frozenset(e.category for e in light if _bucket("category", e.category) < rate)
    providers = frozenset(
        e.provider
        for e in light
        if e.category not in categories and _bucket("provider", e.provider) < rate
    )
    return CatalogHoldout(categories=categories, providers=providers)


def _light(records: Sequence[Any]) -> Sequence[_Light]:
    return getattr(records, "entries", records)


def _split_family(split: str) -> str:
    if split == "test-unseen-tools":
        return "unseen-tools"
    if split == "test-unseen-categories":
        return "unseen-categories"
    return "seen"


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _leaves(value: Any, path: str = "", depth: int = 0) -> Iterable[tuple[str, Any]]:
    """Scalar leaves of a JSON value as ``(dotted path, value)`` (lists: their first item)."""
    if depth > 5:
        return
    if isinstance(value, dict):
        for key, sub in value.items():
            if "." in str(key):
                continue
            yield from _leaves(sub, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, list):
        if value:
            yield from _leaves(value[0], f"{path}.0" if path else "0", depth + 1)
    elif path:
        yield path, value


def _usable_fact(value: Any, echoed: set[str]) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return abs(value) < 1e12 and str(value) not in echoed
    return (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_FACT_CHARS
        and any(ch.isalnum() for ch in value)
        and value not in echoed
    )


_TAGS = re.compile(r"<[^>]+>|\[([^\]]*)\]\([^)]*\)|[`*_#]{1,3}(?=\w)|(?<=\w)[`*_]{1,3}")
_SENTENCE = re.compile(r"(?<=[a-z0-9)])[.!?](?:\s|$)")


def _summary(record: ToolRecord) -> str:
    """The description's first sentence, cleaned (markup removed), or the humanized tool name."""
    text = _TAGS.sub(lambda m: m.group(1) or "", record.description or "")
    text = " ".join(text.split())
    first = _SENTENCE.split(text, maxsplit=1)[0].strip().rstrip(".:;") if text else ""
    if len(first) > 140:
        first = first[:140].rsplit(" ", 1)[0] + "…"
    return first or " ".join(split_identifier(record.name.split("/")[-1])).lower()


_IRREGULAR = {"is": "check whether it is", "has": "check whether it has"}


def _imperative(record: ToolRecord) -> str:
    """The summary as an instruction: "Gets the template" → "get the template"."""
    summary = _summary(record)
    first, _, rest = summary.partition(" ")
    word = first.lower()
    if word in _IRREGULAR or not first[:1].isupper() or not word.isalpha():
        return f"use {record.name} ({summary})"
    if word.endswith("ies") and len(word) > 4:
        verb = word[:-3] + "y"
    elif word.endswith(("ches", "shes", "sses", "xes", "zes")):
        verb = word[:-2]
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        verb = word[:-1]
    else:
        return f"use {record.name} ({summary})"
    return f"{verb} {rest}".strip()


def _render_arguments(arguments: dict[str, Any]) -> str:
    if not arguments:
        return ""
    parts = [
        f"{key} {value!r}" if isinstance(value, str) else f"{key} {canonical_arguments(value)}"
        for key, value in arguments.items()
    ]
    return " with " + ", ".join(parts)


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@dataclass
class _Candidate:
    record: ToolRecord
    index: int


class CatalogTaskGenerator:
    """Builds G1/G2/G3 tasks from one split's share of a catalog.

    Args:
        records: The catalog (a list of records or a lazily loaded catalog); built-in and
            untyped/synthetic records are never used.
        split: Split label; ``test-unseen-tools`` / ``test-unseen-categories`` draw from the
            held-out providers / categories, every other label from the rest.
        seed: Generator seed (with ``split``, it fixes the candidate pool).
        pool_size: How many usable tools the generator examines (a seeded sample of the split).
        holdout_rate: See :func:`catalog_holdout`.
        holdout: Explicit held-out categories and providers (overrides ``holdout_rate``).

    Attributes:
        skipped: Why examined records were not usable, counted (no schema-satisfying arguments,
            no output fields, output too large, …).

    Raises:
        ConfigError: No usable record in the split.
    """

    def __init__(
        self,
        records: Sequence[ToolRecord],
        *,
        split: str = "train",
        seed: int = 0,
        pool_size: int = 1000,
        holdout_rate: float = 0.1,
        holdout: CatalogHoldout | None = None,
    ) -> None:
        self.records = records
        self.split = split
        self.seed = seed
        self.holdout = holdout or catalog_holdout(records, rate=holdout_rate)
        self.skipped: Counter[str] = Counter()
        family = _split_family(split)
        light = _light(records)
        allowed = [
            index
            for index, entry in enumerate(light)
            if entry.source != "builtin"
            and entry.schema_quality not in UNUSABLE_QUALITY
            and self.holdout.split_of(entry) == family
        ]
        self._by_provider: dict[str, list[int]] = defaultdict(list)
        for index in allowed:
            self._by_provider[light[index].provider].append(index)
        random.Random(f"catalog-pool:{seed}:{split}").shuffle(allowed)
        self._usable: dict[int, bool] = {}
        self.pool: list[_Candidate] = []
        for index in allowed:
            if len(self.pool) >= pool_size or len(self._usable) >= pool_size * 6:
                break
            if self._is_usable(index):
                self.pool.append(_Candidate(records[index], index))
        if not self.pool:
            raise ConfigError(
                f"catalog tasks: no usable typed tool in split {split!r} "
                f"({len(allowed)} candidates, skipped: {dict(self.skipped)})"
            )
        self._consumers: dict[str, list[tuple[_Candidate, str, str]]] | None = None

    def _is_usable(self, index: int) -> bool:
        known = self._usable.get(index)
        if known is not None:
            return known
        record = self.records[index]
        reason = self._unusable_reason(record)
        if reason:
            self.skipped[reason] += 1
        self._usable[index] = not reason
        return not reason

    def _unusable_reason(self, record: ToolRecord) -> str:
        output = record.output_schema or {}
        if not output.get("properties") and not isinstance(record.response_template, dict):
            return "no_output_fields"
        arguments = sample_arguments(record, random.Random(f"probe:{record.id}"))
        if arguments is None:
            return "unsatisfiable_arguments"
        response = _respond(record, arguments, self.seed)
        if len(canonical_arguments(response)) > _MAX_OUTPUT_CHARS:
            return "output_too_large"
        if not any(_usable_fact(v, set()) for _, v in _leaves(response)):
            return "no_scalar_output"
        return ""

    def generate(self, n: int, *, groups: Sequence[str] = CATALOG_GROUPS) -> list[Task]:
        """``n`` tasks cycling through ``groups``; a group the split cannot fill is skipped.

        Raises:
            ConfigError: ``n`` is negative, a group is unknown, or no task could be built.
        """
        chosen = list(groups)
        unknown = [g for g in chosen if g not in CATALOG_GROUPS]
        if n < 0 or unknown or not chosen:
            raise ConfigError(
                f"generate_catalog_tasks: need n >= 0 and groups from {CATALOG_GROUPS}; "
                f"got n={n}, groups={chosen}"
            )
        rng = random.Random(f"catalog-tasks:{self.seed}:{self.split}")
        tasks: list[Task] = []
        failures = 0
        index = 0
        while len(tasks) < n:
            group = chosen[index % len(chosen)]
            task_seed = rng.randrange(2**31)
            task = self.task(len(tasks), group, task_seed)
            index += 1
            if task is None:
                failures += 1
                self.skipped[f"no_{group}_task"] += 1
                if failures > 3 * n + 10:
                    raise ConfigError(
                        f"catalog tasks: split {self.split!r} cannot fill groups {chosen} "
                        f"({len(tasks)} of {n} built)"
                    )
                continue
            tasks.append(task)
        return tasks

    def task(self, index: int, group: str, task_seed: int) -> Task | None:
        """One task of ``group`` (``None`` when this seed finds no fitting tools)."""
        rng = random.Random(f"catalog-task:{self.seed}:{self.split}:{index}:{task_seed}")
        builder = {"G1": self._g1, "G2": self._g2, "G3": self._g3}[group]
        for _ in range(_TRIES):
            built = builder(rng, task_seed)
            if built is not None:
                trace, query, answer = built
                return Task(
                    id=f"catalog-{self.split}-{self.seed}-{index:05d}-{group.lower()}",
                    query=query,
                    group=trace.group(),  # type: ignore[arg-type]
                    family=f"catalog_{group.lower()}",
                    seed=task_seed,
                    split=self.split,
                    calls=trace.calls,
                    facts=trace.facts,
                    gold_answer=answer,
                    pinned=[
                        PinnedResponse(
                            tool=call.tool,
                            arguments=call.arguments,
                            response=trace.outputs[call.id],
                        )
                        for call in trace.calls
                    ],
                )
        return None

    # -- groups ------------------------------------------------------------------------------

    def _pick(self, rng: random.Random) -> _Candidate:
        return self.pool[rng.randrange(len(self.pool))]

    def _g1(self, rng: random.Random, seed: int) -> tuple[_Trace, str, str] | None:
        tool = self._pick(rng)
        trace = _new_trace([tool.record], seed)
        first = self._call(trace, tool.record, rng)
        if first is None:
            return None
        nodes = [first]
        if rng.random() < 0.3:
            second = self._call(trace, tool.record, rng)
            if second is not None and trace.calls[-1].arguments != trace.calls[0].arguments:
                nodes.append(second)
        facts = [self._facts(trace, node, rng, 3 if len(nodes) == 1 else 2) for node in nodes]
        if not all(facts):
            return None
        asks = [
            f"{_imperative(tool.record)}{_render_arguments(trace.calls[int(n[1:]) - 1].arguments)}"
            for n in nodes
        ]
        query = (
            f"Using the {tool.record.provider} API, please {_and(asks)}. "
            f"Tell me {_and([label for group in facts for label in group])}."
        )
        return trace, query, _answer(trace)

    def _g2(self, rng: random.Random, seed: int) -> tuple[_Trace, str, str] | None:
        anchor = self._pick(rng)
        siblings = [i for i in self._by_provider[anchor.record.provider] if i != anchor.index]
        rng.shuffle(siblings)
        chosen = [anchor.record]
        want = rng.choice((2, 3))
        for index in siblings[:_TRIES]:
            if len(chosen) >= want:
                break
            if self._is_usable(index):
                chosen.append(self.records[index])
        if len(chosen) < 2:
            same = [
                c.record
                for c in self.pool
                if c.record.category == anchor.record.category and c is not anchor
            ]
            if not same:
                return None
            chosen.append(same[rng.randrange(len(same))])
        trace = _new_trace(chosen, seed)
        asks, labels = [], []
        for record in chosen:
            node = self._call(trace, record, rng)
            if node is None:
                return None
            found = self._facts(trace, node, rng, 2)
            if not found:
                return None
            asks.append(f"{_imperative(record)}{_render_arguments(trace.calls[-1].arguments)}")
            labels += found
        query = (
            f"I work with {anchor.record.provider}. In parallel, please: "
            + "; ".join(f"({i}) {ask}" for i, ask in enumerate(asks, start=1))
            + f". Then tell me {_and(labels)}."
        )
        return trace, query, _answer(trace)

    def _g3(self, rng: random.Random, seed: int) -> tuple[_Trace, str, str] | None:
        head = self._pick(rng)
        chain = [head.record]
        links: list[tuple[str, str]] = []
        scratch = _new_trace([head.record], seed)
        node = self._call(scratch, head.record, rng)
        if node is None:
            return None
        arguments = [scratch.calls[-1].arguments]
        output = scratch.outputs[node]
        categories = {head.record.category}
        length = rng.choice((2, 2, 3))
        while len(chain) < length:
            step = self._consumer(output, categories, rng, seed)
            if step is None:
                break
            record, path, argument, args = step
            chain.append(record)
            links.append((path, argument))
            arguments.append(args)
            categories.add(record.category)
            output = _respond(record, args, seed)
            if not _fits(output):
                return None
        if len(chain) < 2:
            return None
        extra = None
        if rng.random() < 0.5:
            others = [c.record for c in self.pool if c.record.category not in categories]
            if others:
                extra = others[rng.randrange(len(others))]
        records = chain + ([extra] if extra is not None else [])
        trace = _new_trace(records, seed)
        previous = trace.call(chain[0].id, arguments[0])
        labels: list[str] = []
        steps = [f"{_imperative(chain[0])}{_render_arguments(arguments[0])}"]
        for record, args, (path, argument) in zip(chain[1:], arguments[1:], links, strict=True):
            fixed = {k: v for k, v in args.items() if k != argument}
            previous = trace.call(record.id, fixed, bind={argument: f"{previous}.{path}"})
            field_name = path.split(".")[-1]
            also = f" (also with {_render_arguments(fixed)[6:]})" if fixed else ""
            steps.append(
                f"take the {field_name} from that result and use it as {argument} to "
                f"{_imperative(record)}{also}"
            )
        found = self._facts(trace, previous, rng, 2)
        if not found:
            return None
        labels += found
        query = "First, " + "; then ".join(steps) + "."
        if extra is not None:
            side = self._call(trace, extra, rng)
            side_facts = self._facts(trace, side, rng, 1) if side is not None else []
            if not side_facts:
                return None
            labels += side_facts
            side_arguments = _render_arguments(trace.calls[-1].arguments)
            query += f" Independently, {_imperative(extra)}{side_arguments}."
        query += f" Tell me {_and(labels)}."
        return trace, query, _answer(trace)

    # -- helpers -----------------------------------------------------------------------------

    def _call(self, trace: _Trace, record: ToolRecord, rng: random.Random) -> str | None:
        arguments = sample_arguments(record, rng)
        if arguments is None:
            return None
        node = trace.call(record.id, arguments)
        return node if _fits(trace.outputs[node]) else None

    def _facts(self, trace: _Trace, node: str, rng: random.Random, count: int) -> list[str]:
        call = next(c for c in trace.calls if c.id == node)
        echoed = {str(v) for v in call.arguments.values()}
        leaves = [
            (p, v)
            for p, v in _leaves(trace.outputs[node])
            if _usable_fact(v, echoed) and not p.lower().startswith("error")
        ]
        if not leaves:
            return []
        chosen = sorted(rng.sample(range(len(leaves)), min(count, len(leaves))))
        tool = call.tool.split("/", 1)[1]
        labels = []
        for i in chosen:
            path, value = leaves[i]
            label = f"the {_field_label(path)} of the {tool} result"
            tolerance = 0.01 if isinstance(value, float) else None
            trace.facts.append(
                AnswerFact(value=value, label=label, source=f"{node}.{path}", tolerance=tolerance)
            )
            labels.append(label)
        return labels

    def _consumer(
        self, output: Any, categories: set[str], rng: random.Random, seed: int
    ) -> tuple[ToolRecord, str, str, dict[str, Any]] | None:
        """A pool tool of a new category with a required argument fed by a field of ``output``."""
        consumers = self._consumer_index()
        leaves = [(p, v) for p, v in _leaves(output) if _usable_fact(v, set())]
        rng.shuffle(leaves)
        for path, value in leaves:
            options = [
                (c, argument)
                for c, argument, kind in consumers.get(_norm(path.split(".")[-1]), ())
                if c.record.category not in categories and kind == _json_type(value)
            ]
            rng.shuffle(options)
            for candidate, argument in options[:5]:
                args = sample_arguments(candidate.record, rng)
                if args is None:
                    continue
                args[argument] = value
                scratch = ToolEnvSimulator([candidate.record], seed=seed, handlers={})
                try:
                    scratch.validate(candidate.record.id, args)
                except ValueError:
                    continue
                return candidate.record, path, argument, args
        return None

    def _consumer_index(self) -> dict[str, list[tuple[_Candidate, str, str]]]:
        if self._consumers is None:
            index: dict[str, list[tuple[_Candidate, str, str]]] = defaultdict(list)
            for candidate in self.pool:
                schema = candidate.record.input_schema
                properties = schema.get("properties") or {}
                for name in schema.get("required") or ():
                    sub = properties.get(name)
                    if isinstance(sub, dict) and sub.get("type") in ("string", "integer", "number"):
                        index[_norm(name)].append((candidate, name, sub["type"]))
            self._consumers = dict(index)
        return self._consumers


def _field_label(path: str) -> str:
    """``"Items.0.Name"`` → ``"Items[0].Name"``."""
    return re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", path)


def _fits(output: Any) -> bool:
    """Whether a gold output can be shown whole and is not mistaken for a tool error."""
    looks_failed = isinstance(output, dict) and set(output) == {"error"}
    return not looks_failed and len(canonical_arguments(output)) <= _MAX_OUTPUT_CHARS


def _json_type(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return "integer"
    return "number" if isinstance(value, float) else "string"


def _new_trace(records: Sequence[ToolRecord], seed: int) -> _Trace:
    unique = list({record.id: record for record in records}.values())
    return _Trace(ToolEnvSimulator(unique, seed=seed, handlers={}))


def _respond(record: ToolRecord, arguments: dict[str, Any], seed: int) -> Any:
    return ToolEnvSimulator([record], seed=seed, handlers={}).respond(record.id, arguments)


def _answer(trace: _Trace) -> str:
    return "; ".join(f"{fact.label}: {fact.value}" for fact in trace.facts) + "."


def generate_catalog_tasks(
    records: Sequence[ToolRecord],
    n: int,
    *,
    seed: int = 0,
    split: str = "train",
    groups: Sequence[str] = CATALOG_GROUPS,
    pool_size: int = 1000,
    holdout_rate: float = 0.1,
    holdout: CatalogHoldout | None = None,
) -> list[Task]:
    """Generate ``n`` description-driven tasks over real catalog records, reproducibly.

    Args:
        records: The catalog (e.g. ``load_catalog().records``, or a list of records).
        n: Number of tasks.
        seed: Generator seed.
        split: Split label (``test-unseen-tools`` / ``test-unseen-categories`` use held-out
            providers / categories; anything else the seen ones).
        groups: Which of ``G1``, ``G2``, ``G3`` to cycle through.
        pool_size: Usable tools examined per generator (a seeded sample of the split).
        holdout_rate: Share of categories and providers held out (see :func:`catalog_holdout`).
        holdout: Explicit held-out categories and providers (overrides ``holdout_rate``).

    Raises:
        ConfigError: Bad ``n``/``groups``, or the split has no usable tool for the groups.
    """
    generator = CatalogTaskGenerator(
        records,
        split=split,
        seed=seed,
        pool_size=pool_size,
        holdout_rate=holdout_rate,
        holdout=holdout,
    )
    return generator.generate(n, groups=groups)


def catalog_task_records(task: Task, records: Sequence[ToolRecord]) -> list[ToolRecord]:
    """The records of the task's gold tools, looked up in ``records``.

    Raises:
        ConfigError: A gold tool is not in ``records``.
    """
    lookup = getattr(records, "get", None)
    if lookup is None:
        by_id = {record.id: record for record in records}
        lookup = by_id.get
    found = {tool: lookup(tool) for tool in task.tools}
    missing = [tool for tool, record in found.items() if record is None]
    if missing:
        raise ConfigError(f"task {task.id} uses tools missing from the catalog: {missing}")
    return [record for record in found.values() if record is not None]


def catalog_task_env(
    task: Task,
    records: Sequence[ToolRecord],
    *,
    distractors: int = 48,
    **options: Any,
) -> ToolEnv:
    """A ToolEnv in the task's world over its gold tools plus seeded distractor tools.

    Distractors are other tools of the gold providers (near duplicates) and random tools of the
    catalog, so the agent has to search; gold responses are the task's pinned ones.

    Args:
        task: A catalog task.
        records: The catalog the task was generated from.
        distractors: How many non-gold tools to add.
        **options: Further :class:`ToolEnv` options (failure injection, latency, an LLM simulator).
    """
    gold = catalog_task_records(task, records)
    light = _light(records)
    providers = {record.provider for record in gold}
    rng = random.Random(f"distractors:{task.id}:{task.seed}")
    same = [i for i, e in enumerate(light) if e.provider in providers and e.source != "builtin"]
    others = rng.sample(range(len(light)), min(len(light), distractors * 2))
    chosen: dict[str, ToolRecord] = {record.id: record for record in gold}
    for index in rng.sample(same, min(len(same), distractors // 2)) + others:
        if len(chosen) >= len(gold) + distractors:
            break
        if light[index].source != "builtin" and light[index].schema_quality not in UNUSABLE_QUALITY:
            chosen.setdefault(light[index].id, records[index])
    return ToolEnv(
        list(chosen.values()), seed=task.seed, pinned=task.pinned, handlers={}, **options
    )

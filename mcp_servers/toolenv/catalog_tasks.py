"""Tasks over the real catalog: G1 / G2 / G3 requests people would write, with pinned gold.

The built-in families (:mod:`.tasks`) have hand-written queries over hand-written tools; this
module builds tasks for any typed catalog record (botocore, Google discovery, OpenAPI, MCP
servers, …) with no LLM:

- **arguments** are sampled from each tool's input schema (:func:`.arguments.sample_arguments`),
  free-text ones replaced by plausible values for their name (a city, a title, a person);
- **responses** are the schema-driven ones with placeholders grounded in plausible values
  (:mod:`.catalog_values`); the gold DAG is run against them and every gold response is
  **pinned** into the task, so the task replays exactly whatever later answers;
- **answer facts** are output fields that mean something to the asker (named quantities, dates,
  states, names; never identifiers, links, tokens or echoed arguments);
- the **query** is phrased from the operations' descriptions and the arguments' meanings
  (:mod:`.catalog_phrasing`): it never names a tool or an argument key, and test splits use
  sentence frames that ``train`` and ``dev`` never do.

Groups: ``G1`` one tool (one call, sometimes two in parallel with other arguments); ``G2`` two or
three tools of one provider (or category) called in parallel; ``G3`` tools of several categories
with at least one dependency: an output field of one tool plausibly feeds a required argument of
a tool in another category (same specific name and JSON type, e.g. an output ``workspaceName``
feeds ``workspaceName``, or ``channel.id`` feeds ``channelId``; generic names such as ``id`` or
``name`` alone never link), in chains of 2–3, sometimes with an independent parallel branch.

Splits: held-out splits are defined over whole catalog categories and whole providers by a
salted hash of their names (:func:`catalog_holdout`), so they do not depend on which other
sources are installed: ``test-unseen-categories`` uses only held-out categories,
``test-unseen-tools`` only held-out providers of seen categories, and ``train``, ``dev`` and
``test-seen`` neither (each drawn with its own seeds). Every non-train split drops tasks whose
query or gold answer equals one of the ``train`` tasks of the same seed
(:func:`generate_catalog_tasks`).
Each task's environment adds distractors from the whole catalog: other tools of its providers,
tools with similar names elsewhere, and random ones (:func:`catalog_task_env`).

The full catalog is built once (``paraagent toolenv catalog build``, about a minute, cached
under ``~/.cache/paraagent/toolenv``); tests use small fixture catalogs.
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
from paraagent_runtime.intervals import DEFAULT_EVAL_TASKS

from . import catalog_phrasing as phrasing
from .arguments import sample_arguments
from .catalog_values import argument_value, grounded_handler, meaningful_fact
from .generic import canonical_arguments
from .records import ToolRecord
from .simulator import ToolEnvSimulator
from .source import ToolEnv
from .trace import Trace

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
_TRIES = 40
_GROUP_RETRIES = 4
_GENERIC_LINKS = frozenset(
    {
        "id",
        "ids",
        "name",
        "key",
        "type",
        "data",
        "value",
        "values",
        "status",
        "code",
        "kind",
        "query",
        "text",
        "body",
        "title",
        "url",
        "page",
        "limit",
        "offset",
        "token",
        "version",
        "description",
        "q",
        "input",
        "content",
        "message",
        "result",
        "path",
        "format",
        "mode",
        "region",
        "location",
        "language",
        "lang",
        "date",
        "time",
        "requestid",
        "nextpagetoken",
        "pagetoken",
        "etag",
        "state",
        "action",
        "filter",
        "namespace",
        "typename",
        "apiversion",
        "startdate",
        "enddate",
        "parent",
        "resource",
        "resourcename",
    }
)
"""Field names too generic to say that one operation's output feeds another's input."""
_UNIVERSAL_LINKS = frozenset(
    {
        "email",
        "emailaddress",
        "username",
        "city",
        "country",
        "countrycode",
        "currencycode",
        "phone",
        "phonenumber",
        "domain",
        "domainname",
        "ipaddress",
        "hostname",
        "symbol",
        "ticker",
        "isbn",
        "timezone",
        "postalcode",
        "zipcode",
        "address",
        "latitude",
        "longitude",
    }
)
"""Values that mean the same thing in any system; identifiers only link within one vendor."""


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
        excluded: Providers with tools in both a held-out and a seen category: no split uses
            them, so every provider is held out whole or not at all.
    """

    categories: frozenset[str]
    providers: frozenset[str]
    excluded: frozenset[str] = frozenset()

    def split_of(self, entry: _Light) -> str:
        """The record's split family.

        One of ``seen``, ``unseen-tools``, ``unseen-categories`` or ``excluded``.
        """
        if entry.provider in self.excluded:
            return "excluded"
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
    spans: dict[str, set[bool]] = defaultdict(set)
    for entry in light:
        spans[entry.provider].add(entry.category in categories)
    excluded = frozenset(provider for provider, held in spans.items() if len(held) == 2)
    providers = frozenset(
        provider
        for provider, held in spans.items()
        if held == {False} and _bucket("provider", provider) < rate
    )
    return CatalogHoldout(categories=categories, providers=providers, excluded=excluded)


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
        if record.description.lstrip().lower().startswith("deprecated"):
            return "deprecated"
        output = record.output_schema or {}
        if not output.get("properties") and not isinstance(record.response_template, dict):
            return "no_output_fields"
        arguments = sample_arguments(record, random.Random(f"probe:{record.id}"))
        if arguments is None:
            return "unsatisfiable_arguments"
        response = _respond(record, arguments, self.seed)
        if len(canonical_arguments(response)) > _MAX_OUTPUT_CHARS:
            return "output_too_large"
        if not any(meaningful_fact(p, v, set()) for p, v in _leaves(response)):
            return "no_scalar_output"
        return ""

    def generate(
        self,
        n: int,
        *,
        groups: Sequence[str] = CATALOG_GROUPS,
        exclude: Iterable[Task] = (),
    ) -> list[Task]:
        """``n`` tasks cycling through ``groups``; a group the split cannot fill yields its turn.

        A task whose query or gold answer equals one of ``exclude`` (e.g. the train tasks) is
        drawn again.

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
        excluded = list(exclude)
        taken = {task.query for task in excluded} | {task.gold_answer for task in excluded}
        rng = random.Random(f"catalog-tasks:{self.seed}:{self.split}")
        tasks: list[Task] = []
        failures = 0
        index = retries = 0
        while len(tasks) < n:
            group = chosen[index % len(chosen)]
            task_seed = rng.randrange(2**31)
            task = self.task(len(tasks), group, task_seed)
            if task is None or task.query in taken or task.gold_answer in taken:
                failures += 1
                retries += 1
                # A group keeps its turn for a few draws (so groups stay balanced), then yields.
                if retries >= _GROUP_RETRIES:
                    index, retries = index + 1, 0
                self.skipped[f"no_{group}_task" if task is None else "duplicate"] += 1
                if failures > 3 * n + 10:
                    raise ConfigError(
                        f"catalog tasks: split {self.split!r} cannot fill groups {chosen} "
                        f"({len(tasks)} of {n} built)"
                    )
                continue
            tasks.append(task)
            taken |= {task.query, task.gold_answer}
            index, retries = index + 1, 0
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

    def _frame(self, shape: str, rng: random.Random) -> str:
        return phrasing.choose(rng, phrasing.frames_for(shape, self.split))

    def _g1(self, rng: random.Random, seed: int) -> tuple[Trace, str, str] | None:
        tool = self._pick(rng)
        trace = _new_trace([tool.record], seed)
        first = self._call(trace, tool.record, rng)
        if first is None:
            return None
        nodes = [first]
        if rng.random() < 0.3:
            recorded = len(trace.calls)
            second = self._call(trace, tool.record, rng)
            if second is not None and trace.calls[-1].arguments != trace.calls[0].arguments:
                nodes.append(second)
            elif len(trace.calls) > recorded:
                trace.discard_last()
        labels = self._facts(trace, nodes[0], rng, rng.choice((1, 2)))
        if not labels:
            return None
        service = phrasing.service(tool.record.provider)
        if len(nodes) == 1:
            query = phrasing.sentence(
                self._frame("single", rng),
                service=service,
                act=phrasing.action(tool.record),
                args=_for(trace, nodes[0], tool.record),
                facts=phrasing.join_and(labels),
            )
            return trace, query, _answer(trace)
        paths = [fact.source.split(".", 1)[1] for fact in trace.facts]
        if not self._same_facts(trace, nodes[1], paths):
            return None
        acts = [f"{phrasing.action(tool.record)}{_for(trace, node, tool.record)}" for node in nodes]
        query = phrasing.sentence(
            self._frame("parallel", rng),
            service=service,
            acts=" and ".join(acts),
            facts=f"{phrasing.join_and(labels)} for each",
        )
        return trace, query, _answer(trace)

    def _g2(self, rng: random.Random, seed: int) -> tuple[Trace, str, str] | None:
        anchor = self._pick(rng)
        siblings = [i for i in self._by_provider[anchor.record.provider] if i != anchor.index]
        rng.shuffle(siblings)
        chosen = [anchor.record]
        want = rng.choice((2, 2, 3))
        for index in siblings[:_TRIES]:
            if len(chosen) >= want:
                break
            if self._is_usable(index) and _distinct_action(self.records[index], chosen):
                chosen.append(self.records[index])
        if len(chosen) < 2:
            return None
        trace = _new_trace(chosen, seed)
        acts, labels = [], []
        for record in chosen:
            node = self._call(trace, record, rng)
            if node is None:
                return None
            found = self._facts(trace, node, rng, 1, taken=labels)
            if not found:
                return None
            acts.append(f"{phrasing.action(record)}{_for(trace, node, record)}")
            labels += found
        query = phrasing.sentence(
            self._frame("parallel", rng),
            service=phrasing.service(anchor.record.provider),
            acts=phrasing.join_and(acts),
            facts=phrasing.join_and(labels),
        )
        return trace, query, _answer(trace)

    def _g3(self, rng: random.Random, seed: int) -> tuple[Trace, str, str] | None:
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
            step = self._consumer(chain[-1], output, categories, rng, seed)
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
        if rng.random() < 0.4:
            others = [c.record for c in self.pool if c.record.category not in categories]
            if others:
                extra = others[rng.randrange(len(others))]
        trace = _new_trace(chain + ([extra] if extra is not None else []), seed)
        previous = trace.call(chain[0].id, arguments[0])
        head_text = (
            f"{phrasing.action(chain[0])} on {phrasing.service(chain[0].provider)}"
            f"{_for(trace, previous, chain[0])}"
        )
        steps: list[str] = []
        link_phrases: list[str] = []
        for record, args, (path, argument) in zip(chain[1:], arguments[1:], links, strict=True):
            fixed = {k: v for k, v in args.items() if k != argument}
            previous = trace.call(record.id, fixed, bind={argument: f"{previous}.{path}"})
            also = phrasing.join_and(phrasing.argument_phrases(fixed, record.input_schema))
            steps.append(
                f"{phrasing.action(record)} on {phrasing.service(record.provider)}"
                + (f" (with {also})" if also else "")
            )
            link_phrases.append(phrasing.field_phrase(path))
        labels = self._facts(trace, previous, rng, rng.choice((1, 2)))
        if not labels:
            return None
        following = steps[0]
        for link, step in zip(link_phrases[1:], steps[1:], strict=True):
            following += f", and with its {link}, {step}"
        query = phrasing.sentence(
            self._frame("chain", rng),
            service=phrasing.service(chain[0].provider),
            head=head_text,
            link=link_phrases[0],
            next=following,
            facts=phrasing.join_and(labels),
        )
        if extra is not None:
            side = self._call(trace, extra, rng)
            side_labels = self._facts(trace, side, rng, 1, taken=labels) if side else []
            if not side_labels:
                return None
            query += (
                f" Separately, {phrasing.action(extra)} on {phrasing.service(extra.provider)}"
                f"{_for(trace, side, extra)} and tell me the {side_labels[0]} too."
            )
        return trace, query, _answer(trace)

    # -- helpers -----------------------------------------------------------------------------

    def _call(self, trace: Trace, record: ToolRecord, rng: random.Random) -> str | None:
        arguments = _plausible_arguments(record, rng)
        if arguments is None:
            return None
        node = trace.call(record.id, arguments)
        return node if _fits(trace.outputs[node]) else None

    def _facts(
        self,
        trace: Trace,
        node: str,
        rng: random.Random,
        count: int,
        *,
        taken: Sequence[str] = (),
    ) -> list[str]:
        """Record up to ``count`` meaningful facts of ``node``'s output; return their phrases.

        Phrases in ``taken`` (facts of other calls of the task) are skipped, so every fact the
        query asks for reads differently.
        """
        call = next(c for c in trace.calls if c.id == node)
        echoed = {str(v) for v in call.arguments.values()}
        by_phrase: dict[str, tuple[str, Any]] = {}
        for path, value in _leaves(trace.outputs[node]):
            label = phrasing.field_phrase(path)
            if meaningful_fact(path, value, echoed) and label not in taken:
                by_phrase.setdefault(label, (path, value))
        if not by_phrase:
            return []
        labels = sorted(rng.sample(sorted(by_phrase), min(count, len(by_phrase))))
        for label in labels:
            path, value = by_phrase[label]
            self._record_fact(trace, node, path, value, label)
        return labels

    def _same_facts(self, trace: Trace, node: str, paths: Sequence[str]) -> bool:
        """Record the facts at ``paths`` of ``node`` too (a repeated call asks the same)."""
        call = next(c for c in trace.calls if c.id == node)
        echoed = {str(v) for v in call.arguments.values()}
        found = dict(_leaves(trace.outputs[node]))
        if not all(path in found and meaningful_fact(path, found[path], echoed) for path in paths):
            return False
        for path in paths:
            self._record_fact(trace, node, path, found[path], phrasing.field_phrase(path))
        return True

    @staticmethod
    def _record_fact(trace: Trace, node: str, path: str, value: Any, label: str) -> None:
        tolerance = 0.01 if isinstance(value, float) else None
        trace.facts.append(
            AnswerFact(value=value, label=label, source=f"{node}.{path}", tolerance=tolerance)
        )

    def _consumer(
        self,
        producer: ToolRecord,
        output: Any,
        categories: set[str],
        rng: random.Random,
        seed: int,
    ) -> tuple[ToolRecord, str, str, dict[str, Any]] | None:
        """A pool tool of a new category with a required argument fed by a field of ``output``.

        Identifiers (``documentId``) only feed tools of the producer's vendor; values that mean
        the same everywhere (an email, a city) feed any.
        """
        consumers = self._consumer_index()
        vendor = _vendor(producer.provider)
        leaves = [(p, v) for p, v in _leaves(output) if _linkable(v)]
        rng.shuffle(leaves)
        for path, value in leaves:
            options = [
                (c, argument)
                for key in _link_keys(path)
                for c, argument, kind in consumers.get(key, ())
                if c.record.category not in categories
                and kind == _json_type(value)
                and (key in _UNIVERSAL_LINKS or _vendor(c.record.provider) == vendor)
            ]
            rng.shuffle(options)
            for candidate, argument in options[:5]:
                args = _plausible_arguments(candidate.record, rng)
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
                    key = _norm(name)
                    if (
                        isinstance(sub, dict)
                        and sub.get("type") in ("string", "integer", "number")
                        and key not in _GENERIC_LINKS
                        and len(key) >= 5
                    ):
                        index[key].append((candidate, name, sub["type"]))
            self._consumers = dict(index)
        return self._consumers


def _link_keys(path: str) -> list[str]:
    """The argument names an output field at ``path`` may feed.

    Its own name when specific, or its parent's name joined to it (``channel.id`` →
    ``channelid``).
    """
    parts = [part for part in path.split(".") if not part.isdigit()]
    leaf = _norm(parts[-1]) if parts else ""
    keys = [leaf] if leaf not in _GENERIC_LINKS and len(leaf) >= 5 else []
    if len(parts) > 1 and leaf in ("id", "name", "key", "code"):
        parent = _norm(parts[-2])
        for stem in {parent, parent[:-1] if parent.endswith("s") else parent}:
            keys.append(stem + leaf)
    return keys


def _vendor(provider: str) -> str:
    """``google_docs`` → ``google``; providers of one company share identifiers."""
    head = provider.split("_", 1)[0]
    return head if head in ("google", "aws", "azure", "microsoft", "rapidapi") else provider


def _linkable(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, str):
        return 0 < len(value) <= 80
    return isinstance(value, int | float)


def _distinct_action(record: ToolRecord, chosen: Sequence[ToolRecord]) -> bool:
    """Whether ``record`` reads differently from the operations already ``chosen``."""
    return phrasing.action(record) not in {phrasing.action(other) for other in chosen}


def _plausible_arguments(record: ToolRecord, rng: random.Random) -> dict[str, Any] | None:
    """Schema-valid arguments with free text replaced by plausible values for their names."""
    arguments = sample_arguments(record, rng)
    if arguments is None:
        return None
    properties = record.input_schema.get("properties") or {}
    plausible = dict(arguments)
    for name, value in arguments.items():
        sub = properties.get(name)
        if isinstance(value, str) and isinstance(sub, dict):
            replacement = argument_value(name, sub, rng)
            if replacement is not None:
                plausible[name] = replacement
    if plausible != arguments:
        try:
            ToolEnvSimulator([record], handlers={}).validate(record.id, plausible)
        except ValueError:
            return arguments
    return plausible


def _for(trace: Trace, node: str, record: ToolRecord) -> str:
    """`` for <argument phrases>`` of a recorded call ("" without arguments worth saying)."""
    call = next(c for c in trace.calls if c.id == node)
    phrases = phrasing.argument_phrases(call.arguments, record.input_schema)
    return f" for {phrasing.join_and(phrases)}" if phrases else ""


def _fits(output: Any) -> bool:
    """Whether a gold output can be shown whole and is not mistaken for a tool error."""
    looks_failed = isinstance(output, dict) and set(output) == {"error"}
    return not looks_failed and len(canonical_arguments(output)) <= _MAX_OUTPUT_CHARS


def _json_type(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return "integer"
    return "number" if isinstance(value, float) else "string"


def _handlers(records: Iterable[ToolRecord]) -> dict[str, Any]:
    return {record.id: grounded_handler(record) for record in records}


def _new_trace(records: Sequence[ToolRecord], seed: int) -> Trace:
    unique = list({record.id: record for record in records}.values())
    return Trace(ToolEnvSimulator(unique, seed=seed, handlers=_handlers(unique)))


def _respond(record: ToolRecord, arguments: dict[str, Any], seed: int) -> Any:
    return ToolEnvSimulator([record], seed=seed, handlers=_handlers([record])).respond(
        record.id, arguments
    )


def _answer(trace: Trace) -> str:
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
    train_reference: int = DEFAULT_EVAL_TASKS,
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
        train_reference: How many ``train`` tasks of the same seed (at least ``n``) every other
            split is deduplicated against: none of its queries or gold answers equals theirs.

    Raises:
        ConfigError: Bad ``n``/``groups``, or the split has no usable tool for the groups.
    """

    def generator(label: str) -> CatalogTaskGenerator:
        return CatalogTaskGenerator(
            records,
            split=label,
            seed=seed,
            pool_size=pool_size,
            holdout_rate=holdout_rate,
            holdout=holdout,
        )

    train = (
        []
        if split == "train"
        else generator("train").generate(max(n, train_reference), groups=groups)
    )
    return generator(split).generate(n, groups=groups, exclude=train)


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

    Distractors come from the whole catalog: other tools of the gold providers (near
    duplicates), tools of other providers whose names share a word with a gold tool (the same
    operation elsewhere), and random ones, so the agent has to search. Gold responses are the
    task's pinned ones; any other call gets a grounded response (:mod:`.catalog_values`).

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
    names = _name_index(records)
    similar = sorted(
        {i for record in gold for word in _name_words(record.name) for i in names.get(word, ())}
        - set(same)
    )
    others = rng.sample(range(len(light)), min(len(light), distractors * 2))
    chosen: dict[str, ToolRecord] = {record.id: record for record in gold}
    picks = rng.sample(same, min(len(same), distractors // 3))
    picks += rng.sample(similar, min(len(similar), distractors // 3))
    for index in picks + others:
        if len(chosen) >= len(gold) + distractors:
            break
        if light[index].source != "builtin" and light[index].schema_quality not in UNUSABLE_QUALITY:
            chosen.setdefault(light[index].id, records[index])
    tools = list(chosen.values())
    return ToolEnv(tools, seed=task.seed, pinned=task.pinned, handlers=_handlers(tools), **options)


_VERBS = frozenset(
    {
        "get",
        "list",
        "create",
        "delete",
        "update",
        "put",
        "post",
        "patch",
        "set",
        "describe",
        "search",
        "find",
        "fetch",
        "retrieve",
        "by",
        "for",
        "with",
        "from",
        "the",
        "and",
        "all",
        "info",
        "details",
        "data",
        "v1",
        "v2",
        "v3",
    }
)
_NAME_INDEXES: dict[int, tuple[Sequence[Any], dict[str, list[int]]]] = {}


def _name_words(name: str) -> set[str]:
    words = {word.lower() for word in split_identifier(name.rsplit("/", 1)[-1])}
    return {word for word in words if len(word) >= 4 and word not in _VERBS}


def _name_index(records: Sequence[Any]) -> dict[str, list[int]]:
    """Catalog positions by the words of their tool names (built once per catalog object)."""
    cached = _NAME_INDEXES.get(id(records))
    if cached is not None and cached[0] is records:
        return cached[1]
    index: dict[str, list[int]] = defaultdict(list)
    for position, entry in enumerate(_light(records)):
        for word in _name_words(entry.id):
            index[word].append(position)
    _NAME_INDEXES.clear()
    _NAME_INDEXES[id(records)] = (records, dict(index))
    return _NAME_INDEXES[id(records)][1]

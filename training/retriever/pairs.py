"""Contrastive training pairs from the ToolEnv catalog: synthesized queries, hard negatives.

Every usable catalog tool (typed sources, not in a held-out category or provider of
:func:`~mcp_servers.toolenv.catalog_tasks.catalog_holdout`) gets a few queries written from its
own text, never copied whole: a request built on one sentence of its description (a few words
dropped), or its name and parameters with values drawn from its schema. The positive is the
tool's search document (:func:`~paraagent_runtime.documents.tool_document`, the very text the
index embeds); the hard negative is another tool of the same provider, else of the same
category. A share of two-need queries ("… and also …") teaches that a query may ask for several
tools: each need's tool is a positive of its own pair.

Benchmark queries come only from the ``train`` part of
:func:`~paraagent_runtime.retrieval.querysets.load_query_sets` (Seal-Tools' ``dev.jsonl``); every
gold tool of such a query is a positive of its own pair, with a negative from the same category
of that query set's pool. The ``dev`` and ``test`` parts are never read here.

Licences: the adapter ships in an Apache-2.0 package, so only permissively licensed text is
trained on. :data:`TRAINING_SOURCE_LICENSES` and :data:`TRAINING_QUERY_SET_LICENSES` name what
may be used; :func:`commercially_usable` refuses any record of another source, any record whose
own licence is non-commercial, and anything StableToolBench-derived (ToolBench, CC BY-NC 4.0:
source ``stabletoolbench``, providers ``rapidapi_*``), whose queries are also a test set.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcp_servers.toolenv.arguments import sample_arguments
from mcp_servers.toolenv.catalog_tasks import catalog_holdout
from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime import ConfigError
from paraagent_runtime.documents import split_identifier, tool_document
from paraagent_runtime.retrieval.stabletoolbench import RetrievalBench
from paraagent_runtime.tools import ToolSpec

__all__ = [
    "TRAINING_QUERY_SET_LICENSES",
    "TRAINING_SOURCE_LICENSES",
    "TrainingPair",
    "benchmark_pairs",
    "build_pairs",
    "check_licenses",
    "commercially_usable",
    "synthesize_queries",
    "trainable_records",
]

_MARKUP = re.compile(r"<[^>]+>|\[([^\]]*)\]\([^)]*\)|[`*#]+")
_SENTENCES = re.compile(r"(?<=[a-z0-9)])[.!?](?:\s+|$)")
# Lead-ins that read well before a third-person verb ("returns the forecast") ...
_THIRD_PERSON = (
    "I need something that {}",
    "which API {}",
    "is there a service that {}",
    "looking for a tool which {}",
    "find me an endpoint that {}",
)
# ... and before anything else ("weather forecast for a city").
_PLAIN = ("{}", "I want {}", "help with: {}", "need {}", "{} please")
_CONNECTORS = (" and also ", ". Then ", ", and ", "; besides that, ", ". Also ")
_MAX_VALUE_CHARS = 40

TRAINING_SOURCE_LICENSES: Mapping[str, str] = {
    "openapi": "CC0-1.0 (APIs.guru definitions; openapi-directory-lite: MIT)",
    "google": "Apache-2.0",
    "botocore": "Apache-2.0",
    "toucan": "MIT (TOUCAN; per-server licences of the tool texts vary)",
    "seal_tools": "Apache-2.0",
}
"""The catalog sources that may be trained on, with their licences (``/work/shared/data/README.md``,
``mcp_servers/toolenv/catalog/*_source.py``). ``stabletoolbench`` is absent on purpose."""

TRAINING_QUERY_SET_LICENSES: Mapping[str, str] = {"seal-tools": "Apache-2.0"}
"""The query sets whose train part may be trained on, with their licences."""

_NON_COMMERCIAL = re.compile(r"(?<![A-Za-z])NC(?![A-Za-z])|non-?commercial", re.IGNORECASE)
_NON_COMMERCIAL_ORIGINS = ("stabletoolbench", "rapidapi_")


def commercially_usable(record: ToolRecord) -> bool:
    """Whether ``record``'s text may be trained on for a commercially usable model."""
    origin = (record.source, record.provider, record.id)
    return (
        record.source in TRAINING_SOURCE_LICENSES
        and not _NON_COMMERCIAL.search(record.license)
        and not any(part.startswith(_NON_COMMERCIAL_ORIGINS) for part in origin)
    )


def check_licenses(sources: Sequence[str], query_sets: Sequence[str]) -> None:
    """Refuse catalog sources or query sets outside the permissively licensed ones.

    Raises:
        ConfigError: A source or query set is not in :data:`TRAINING_SOURCE_LICENSES` /
            :data:`TRAINING_QUERY_SET_LICENSES` (e.g. ``stabletoolbench``: CC BY-NC 4.0).
    """
    for kind, names, allowed in (
        ("catalog source", sources, TRAINING_SOURCE_LICENSES),
        ("query set", query_sets, TRAINING_QUERY_SET_LICENSES),
    ):
        refused = sorted(set(names) - set(allowed))
        if refused:
            raise ConfigError(
                f"{kind} {', '.join(refused)} is not permissively licensed for training "
                f"(allowed: {', '.join(allowed)})"
            )


@dataclass(frozen=True)
class TrainingPair:
    """One (query, positive document, hard-negative document) triple and how it was made."""

    query: str
    positive: str
    negative: str
    kind: str
    tool_id: str


def trainable_records(
    records: Sequence[ToolRecord], *, sources: Sequence[str], holdout_rate: float
) -> list[ToolRecord]:
    """The commercially usable records of ``sources`` outside the catalog's holdout.

    :func:`commercially_usable` keeps StableToolBench-derived and non-commercial records out
    whatever ``sources`` says.
    """
    holdout = catalog_holdout(records, rate=holdout_rate)
    keep = set(sources)
    return [
        record
        for record in records
        if record.source in keep
        and commercially_usable(record)
        and holdout.split_of(record) == "seen"
    ]


def _sentences(description: str) -> list[str]:
    text = " ".join(_MARKUP.sub(lambda m: m.group(1) or "", description).split())
    parts = [part.strip(" .:;") for part in _SENTENCES.split(text)]
    return [part for part in parts if len(part.split()) >= 2][:3]


def _drop_words(text: str, rng: random.Random, rate: float) -> str:
    words = text.split()
    kept = [word for word in words if rng.random() >= rate]
    return " ".join(kept if len(kept) >= 2 else words)


def _values(record: ToolRecord, rng: random.Random) -> list[str]:
    arguments = sample_arguments(record, rng) or {}
    return [
        value
        for value in arguments.values()
        if isinstance(value, str) and 0 < len(value) <= _MAX_VALUE_CHARS
    ]


def _request(record: ToolRecord, rng: random.Random) -> str | None:
    sentences = _sentences(record.description)
    if not sentences:
        return None
    sentence = _drop_words(rng.choice(sentences[:2]), rng, 0.1)
    first, _, rest = sentence.partition(" ")
    third_person = first.isalpha() and first.lower().endswith("s") and first[:1].isupper()
    body = f"{first.lower()} {rest}".strip()
    query = rng.choice(_THIRD_PERSON if third_person else _PLAIN).format(body)
    values = _values(record, rng)
    if values and rng.random() < 0.5:
        query += " for " + " and ".join(values[:2])
    return query


def _by_name(record: ToolRecord, rng: random.Random) -> str:
    words = " ".join(split_identifier(record.name)).lower()
    properties = list((record.input_schema.get("properties") or {}).keys())
    values = _values(record, rng)
    if values and rng.random() < 0.5:
        return f"{words} {' '.join(values[:2])}"
    if properties:
        chosen = rng.sample(properties, k=min(2, len(properties)))
        named = " and ".join(" ".join(split_identifier(str(name))).lower() for name in chosen)
        return f"{words} by {named}"
    return f"{record.category.lower()} {words}".strip()


def synthesize_queries(record: ToolRecord, rng: random.Random, count: int) -> list[tuple[str, str]]:
    """Up to ``count`` distinct ``(query, kind)`` for one tool (``request`` or ``name``)."""
    out: dict[str, str] = {}
    for attempt in range(count * 3):
        request = _request(record, rng) if attempt % 2 == 0 else None
        query, kind = (request, "request") if request else (_by_name(record, rng), "name")
        out.setdefault(query, kind)
        if len(out) >= count:
            break
    return list(out.items())


class _HardNegatives:
    """Draws a negative for a tool: same provider first, then same category, then any."""

    def __init__(self, tools: Sequence[ToolSpec], rng: random.Random) -> None:
        self.documents = [tool_document(tool) for tool in tools]
        self.tools = tools
        self.rng = rng
        self.by_provider: dict[str, list[int]] = defaultdict(list)
        self.by_category: dict[str, list[int]] = defaultdict(list)
        for index, tool in enumerate(tools):
            self.by_provider[tool.provider].append(index)
            self.by_category[tool.category].append(index)

    def __call__(self, index: int) -> str:
        tool, document = self.tools[index], self.documents[index]
        for pool in (self.by_provider[tool.provider], self.by_category[tool.category]):
            others = [other for other in pool if self.documents[other] != document]
            if others:
                return self.documents[self.rng.choice(others)]
        while True:
            other = self.documents[self.rng.randrange(len(self.tools))]
            if other != document:
                return other


def build_pairs(
    records: Sequence[ToolRecord],
    *,
    queries_per_tool: int,
    multi_intent_share: float,
    max_pairs: int,
    seed: int,
) -> list[TrainingPair]:
    """Training triples for ``records`` (already filtered by :func:`trainable_records`).

    Args:
        records: The tools to train on.
        queries_per_tool: Synthesized queries per tool.
        multi_intent_share: Extra two-need pairs, as a share of the single-need ones.
        max_pairs: Keep a random subset of at most this many pairs.
        seed: Seeds every draw, so a run's data is reproducible.
    """
    rng = random.Random(seed)
    negative = _HardNegatives([record.to_spec() for record in records], rng)
    documents = negative.documents
    pairs: list[TrainingPair] = []
    singles: list[tuple[int, str]] = []
    for index, record in enumerate(records):
        for query, kind in synthesize_queries(record, rng, queries_per_tool):
            singles.append((index, query))
            pairs.append(TrainingPair(query, documents[index], negative(index), kind, record.id))
    for _ in range(int(len(pairs) * multi_intent_share / 2)):
        (a, first), (b, second) = rng.sample(singles, 2)
        if records[a].category == records[b].category:
            continue
        query = first + rng.choice(_CONNECTORS) + second
        for index in (a, b):
            pairs.append(
                TrainingPair(query, documents[index], negative(index), "multi", records[index].id)
            )
    rng.shuffle(pairs)
    return pairs[:max_pairs]


def benchmark_pairs(benches: Sequence[RetrievalBench], *, seed: int) -> list[TrainingPair]:
    """One pair per (query, gold tool) of ``benches`` (load them with ``parts=("train",)``).

    Raises:
        ConfigError: A bench is not a permissively licensed query set (see :func:`check_licenses`).
    """
    check_licenses((), [bench.name for bench in benches])
    rng = random.Random(seed)
    pairs: list[TrainingPair] = []
    for bench in benches:
        negative = _HardNegatives(bench.tools, rng)
        position = {tool.id: index for index, tool in enumerate(bench.tools)}
        for query in bench.queries:
            for tool_id in query.gold:
                index = position[tool_id]
                pairs.append(
                    TrainingPair(
                        query.text, negative.documents[index], negative(index), "benchmark", tool_id
                    )
                )
    return pairs

"""KeywordToolSearch: identifier-aware tokenizing and BM25 ranking over tool documents."""

from __future__ import annotations

import asyncio

import pytest

from paraagent_runtime.keyword_search import KeywordToolSearch, tokenize
from paraagent_runtime.search import ToolSearch
from paraagent_runtime.tools import ToolSpec


def _spec(identifier: str, description: str = "", properties: dict | None = None) -> ToolSpec:
    return ToolSpec(
        id=identifier,
        description=description,
        input_schema={"type": "object", "properties": properties or {}},
    )


CATALOG = [
    _spec(
        "aviation/getFlightStatus", "Live status of a flight.", {"flightNumber": {"type": "string"}}
    ),
    _spec("weather/forecast", "Weather forecast for a city over the next days."),
    _spec(
        "airports/lookup",
        "Find an airport.",
        {"iata_code": {"description": "Three-letter IATA code"}},
    ),
    _spec("mail/send-email", "Send a message to a recipient."),
    _spec("calendar/list_events", "List calendar events between two dates."),
]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("getFlightStatus", ["get", "flight", "status"]),
        ("list_events", ["list", "event"]),
        ("send-email", ["send", "email"]),
        ("HTTPServerError", ["httpserver", "error"]),
        ("the status of flights", ["status", "flight"]),
        ("analysis v2Api", ["analysis", "v2", "api"]),
        ("", []),
    ],
)
def test_tokenize_splits_identifiers_and_folds_plurals(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


async def _index(specs: list[ToolSpec]) -> KeywordToolSearch:
    search = KeywordToolSearch()
    await search.update(specs)
    return search


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("flight status", "aviation/getFlightStatus"),
        ("weather in Paris tomorrow", "weather/forecast"),
        ("IATA code", "airports/lookup"),
        ("email someone", "mail/send-email"),
        ("events in my calendar", "calendar/list_events"),
    ],
)
async def test_search_ranks_the_matching_tool_first(query: str, expected: str) -> None:
    search = await _index(CATALOG)
    hits = await search.search(query, top_k=3)
    assert hits[0][0] == expected
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)


async def test_search_without_matches_or_budget_returns_nothing() -> None:
    search = await _index(CATALOG)
    assert await search.search("quantum chromodynamics") == []
    assert await search.search("the of and") == []
    assert await search.search("flight", top_k=0) == []
    assert await KeywordToolSearch().search("flight") == []


async def test_update_replaces_the_indexed_set() -> None:
    search = await _index(CATALOG)
    await search.update([spec for spec in CATALOG if spec.id != "weather/forecast"])
    assert len(search) == len(CATALOG) - 1
    assert all(
        identifier != "weather/forecast"
        for identifier, _ in await search.search("weather forecast")
    )


async def test_ties_break_by_id_deterministically() -> None:
    twins = [_spec("b/ping", "ping the host"), _spec("a/ping", "ping the host")]
    search = await _index(twins)
    assert [identifier for identifier, _ in await search.search("ping")] == ["a/ping", "b/ping"]


async def test_finds_the_target_among_thousands() -> None:
    filler = [
        _spec(f"svc{i}/op{i}", f"Operation {i} of service number {i} for records")
        for i in range(3000)
    ]
    target = _spec("payments/refund_charge", "Refund a card charge to the customer.")
    search = await _index([*filler, target])
    assert (await search.search("refund a charge", top_k=5))[0][0] == "payments/refund_charge"
    assert len(await search.search("records", top_k=20)) == 20


def test_implements_the_tool_search_protocol() -> None:
    assert isinstance(KeywordToolSearch(), ToolSearch)


async def test_the_latest_of_concurrent_updates_wins() -> None:
    search = KeywordToolSearch()
    older, newer = CATALOG[:2], CATALOG[2:]
    await asyncio.gather(search.update(older), search.update(newer))
    assert len(search) == len(newer)
    assert (await search.search("IATA code"))[0][0] == "airports/lookup"


async def test_an_update_returns_once_its_tools_are_searchable_even_when_another_follows() -> None:
    # A toolspace refreshed twice at once (a list_changed notification during a refresh) searches
    # right after the first refresh returns: the tools it listed must be indexed by then.
    search = KeywordToolSearch()
    first = asyncio.create_task(search.update(CATALOG[:3]))
    second = asyncio.create_task(search.update(CATALOG))
    await first
    assert (await search.search("IATA code"))[0][0] == "airports/lookup"
    await second
    assert len(search) == len(CATALOG)

"""The one tool-document builder and identifier splitter behind every tool index."""

from __future__ import annotations

import pytest

from paraagent_runtime import ToolSpec
from paraagent_runtime.documents import is_terse, split_identifier, tool_document
from paraagent_runtime.keyword_search import KeywordToolSearch


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("getFlightStatus", ["get", "Flight", "Status"]),
        ("aviation/get_flight-status", ["aviation", "get", "flight", "status"]),
        ("HTTPServerError", ["HTTPServer", "Error"]),
        ("v2Api", ["v2", "Api"]),
        ("Aviation Stack", ["Aviation", "Stack"]),
        ("a.b:c", ["a", "b", "c"]),
        ("__", []),
    ],
)
def test_split_identifier(name: str, words: list[str]) -> None:
    assert split_identifier(name) == words


def test_document_has_provider_name_description_and_parameters() -> None:
    spec = ToolSpec(
        id="aviation/getFlightStatus",
        description="  Live status\nof a flight.  ",
        input_schema={
            "type": "object",
            "properties": {
                "flight_number": {"type": "string", "description": "IATA flight number"},
                "unit": {"type": "string", "enum": ["km", "mi"]},
                "opaque": True,
            },
        },
        provider="Aviation Stack",
    )
    document = tool_document(spec)
    assert document.startswith("Aviation Stack | get Flight Status | Live status of a flight.")
    assert "flight number: IATA flight number" in document
    assert "unit: one of: km, mi" in document
    assert "opaque" in document


def test_document_without_description_or_schema_still_names_the_tool() -> None:
    spec = ToolSpec(id="src/do-thing", description="", input_schema={"type": "object"})
    assert tool_document(spec) == "src | do thing"


def test_document_is_capped() -> None:
    spec = ToolSpec(id="s/t", description="word " * 5000)
    assert len(tool_document(spec)) == 2000


async def test_keyword_search_indexes_the_same_document() -> None:
    # Enum values are part of the document, so the keyword search finds them as BM25 does.
    spec = ToolSpec(
        id="maps/route",
        description="A route between two places.",
        input_schema={"type": "object", "properties": {"mode": {"enum": ["bicycle", "car"]}}},
    )
    search = KeywordToolSearch()
    await search.update([spec, ToolSpec(id="maps/geocode", description="Coordinates of a place.")])
    assert "bicycle" in tool_document(spec)
    assert [tool for tool, _ in await search.search("bicycle")] == ["maps/route"]


def test_a_terse_tool_gets_its_category_and_a_described_one_does_not() -> None:
    terse = ToolSpec(
        id="weather_hub/forecast",
        description="Weather Hub: Forecast",
        category="Weather",
        provider="Weather Hub",
        input_schema={"type": "object", "properties": {"city": {"description": "City name"}}},
    )
    assert is_terse(terse)
    assert tool_document(terse) == (
        "Weather Hub | forecast | Weather Hub: Forecast | category: Weather "
        "| parameters: city: City name"
    )
    described = terse.model_copy(update={"description": "Hourly temperature and rain for a city"})
    assert not is_terse(described) and "category" not in tool_document(described)


async def test_non_english_text_stays_searchable() -> None:
    spec = ToolSpec(
        id="wetter/vorhersage", description="Wettervorhersage für eine Stadt in Österreich"
    )
    other = ToolSpec(id="geld/kurs", description="Валютный курс рубля")
    search = KeywordToolSearch()
    await search.update([spec, other])
    assert "Österreich" in tool_document(spec)
    assert [tool for tool, _ in await search.search("österreich")] == ["wetter/vorhersage"]
    assert [tool for tool, _ in await search.search("курс")] == ["geld/kurs"]

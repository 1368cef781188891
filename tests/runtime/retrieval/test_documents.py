"""Tool documents and catalog keys."""

from __future__ import annotations

from paraagent_runtime.retrieval import catalog_key, tool_document
from paraagent_runtime.tools import ToolSpec


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


def test_catalog_key_ignores_order_but_sees_every_change() -> None:
    key = catalog_key(["a/x", "b/y"], ["doc x", "doc y"], "m")
    assert key == catalog_key(["b/y", "a/x"], ["doc y", "doc x"], "m")
    assert key != catalog_key(["a/x", "b/y"], ["doc x", "doc y!"], "m")
    assert key != catalog_key(["a/x", "b/y"], ["doc x", "doc y"], "other-model")
    assert key != catalog_key(["a/x"], ["doc x"], "m")

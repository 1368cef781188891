"""The built-in catalog: size, breadth, valid schemas, sensible annotations."""

from __future__ import annotations

import re

from jsonschema import Draft202012Validator

from mcp_servers.toolenv.records import ToolRecord


def test_catalog_has_64_tools_over_12_providers(records: list[ToolRecord]) -> None:
    assert len(records) >= 64
    assert len({r.provider for r in records}) >= 12
    assert len({r.id for r in records}) == len(records)


def test_every_schema_is_valid_json_schema_with_descriptions(records: list[ToolRecord]) -> None:
    for record in records:
        Draft202012Validator.check_schema(record.input_schema)
        assert record.output_schema is not None
        Draft202012Validator.check_schema(record.output_schema)
        assert record.input_schema["type"] == "object"
        assert record.description and record.category
        for name, prop in record.input_schema["properties"].items():
            assert prop.get("description"), f"{record.id}.{name} lacks a description"
        assert set(record.input_schema.get("required", [])) <= set(
            record.input_schema["properties"]
        )


def test_model_facing_names_are_valid_and_unique(records: list[ToolRecord]) -> None:
    names = [r.to_spec().name for r in records]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names)
    assert "weather__get_forecast" in names


def test_annotations_mark_lookups_read_only_and_actions_destructive(
    records: list[ToolRecord],
) -> None:
    by_id = {r.id: r for r in records}
    for destructive in (
        "email/send_email",
        "hotels/cancel_booking",
        "calendar/create_event",
        "calendar/delete_event",
    ):
        assert by_id[destructive].annotations.destructive
        assert not by_id[destructive].annotations.read_only
    assert by_id["aviation/book_flight"].annotations.read_only is False
    lookups = [r for r in records if r.name.startswith(("get_", "search_", "list_", "find_"))]
    assert lookups and all(
        r.annotations.read_only and not r.annotations.destructive for r in lookups
    )


def test_catalog_contains_near_duplicate_distractors(records: list[ToolRecord]) -> None:
    ids = {r.id for r in records}
    assert {
        "weather/get_current_weather",
        "weather/get_forecast",
        "weather/get_hourly_forecast",
        "aviation/get_airport_weather",
    } <= ids
    assert {"maps/get_distance", "maps/get_directions"} <= ids
    assert {"currency/convert_currency", "currency/get_exchange_rate"} <= ids

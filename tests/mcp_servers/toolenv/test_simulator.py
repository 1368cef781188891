"""The simulator: grounded handlers, determinism, consistency, validation, pinning, failures."""

from __future__ import annotations

import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcp_servers.toolenv import (
    LatencyModel,
    ToolEnvArgumentError,
    ToolEnvHTTPError,
    ToolEnvNotFoundError,
    ToolEnvSimulator,
    ToolEnvTimeoutError,
    ToolEnvTransientError,
    ToolEnvTruncatedError,
    ToolEnvUnknownToolError,
    ToolRecord,
)
from mcp_servers.toolenv.generic import generate_response
from paraagent_runtime.errors import ToolExecutionError
from paraagent_runtime.naming import model_facing_name
from paraagent_runtime.tasks import PinnedResponse
from paraagent_runtime.validation import validate_arguments

from .conftest import example_arguments


def _sim(records: list[ToolRecord], seed: int = 7, **options: Any) -> ToolEnvSimulator:
    return ToolEnvSimulator(records, seed=seed, **options)


@pytest.mark.parametrize("seed", [0, 11])
async def test_every_builtin_tool_answers_within_its_output_schema(
    records: list[ToolRecord], seed: int
) -> None:
    sim = _sim(records, seed)
    examples = example_arguments(sim.world)
    assert set(examples) == {r.id for r in records}
    for record in records:
        provider, tool = record.id.split("/")
        result = await sim.call(provider, tool, examples[record.id])
        errors = list(Draft202012Validator(record.output_schema).iter_errors(result))
        assert not errors, f"{record.id}: {errors[0].message}"


async def test_same_call_same_response_across_instances_and_seeds_differ(
    records: list[ToolRecord],
) -> None:
    args = example_arguments(_sim(records).world)
    first, second, other = _sim(records, 7), _sim(records, 7), _sim(records, 8)
    for tool_id in (
        "weather/get_forecast",
        "finance/get_stock_quote",
        "hotels/search_hotels",
        "currency/get_exchange_rate",
    ):
        provider, tool = tool_id.split("/")
        a = await first.call(provider, tool, args[tool_id])
        assert a == await first.call(provider, tool, args[tool_id])
        assert a == await second.call(provider, tool, args[tool_id])
    forecasts = [
        await s.call("weather", "get_forecast", {"city": "Paris", "days": 7})
        for s in (first, other)
    ]
    assert forecasts[0] != forecasts[1]


async def test_weather_is_consistent_across_tools(records: list[ToolRecord]) -> None:
    sim = _sim(records, 3)
    for city, airport in (("Frankfurt", "FRA"), ("Tokyo", "HND"), ("Sao Paulo", "GRU")):
        current = await sim.call("weather", "get_current_weather", {"city": city})
        metar = await sim.call("aviation", "get_airport_weather", {"code": airport})
        hourly = await sim.call("weather", "get_hourly_forecast", {"city": city, "hours": 1})
        forecast = await sim.call("weather", "get_forecast", {"city": city, "days": 1})
        assert (
            current["temperature"] == metar["temperature_c"] == hourly["hours"][0]["temperature_c"]
        )
        assert current["condition"] == metar["condition"] == forecast["days"][0]["condition"]
        assert forecast["days"][0]["low"] <= current["temperature"] <= forecast["days"][0]["high"]
        imperial = await sim.call(
            "weather", "get_current_weather", {"city": city, "units": "imperial"}
        )
        assert imperial["temperature"] == pytest.approx(
            current["temperature"] * 9 / 5 + 32, abs=0.06
        )


async def test_flight_schedule_agrees_with_search_and_departures(records: list[ToolRecord]) -> None:
    sim = _sim(records, 5)
    number = sorted(sim.world.flights)[3]
    flight = await sim.call("aviation", "get_flight", {"flight_number": number.lower()})
    assert flight["flight_number"] == number
    departures = await sim.call(
        "aviation", "list_departures", {"code": flight["origin"]["code"], "limit": 50}
    )
    assert number in {d["flight_number"] for d in departures["departures"]}
    quote = await sim.call("finance", "get_stock_quote", {"symbol": "SAP"})
    converted = await sim.call(
        "currency",
        "convert_currency",
        {"amount": quote["price"], "from_currency": "EUR", "to_currency": "EUR"},
    )
    assert converted["converted_amount"] == pytest.approx(quote["price"])


@pytest.mark.parametrize(
    ("tool", "arguments", "fragment"),
    [
        ("weather/get_current_weather", {}, "'city' is a required property"),
        ("weather/get_current_weather", {"city": 42}, "city: 42 is not of type 'string'"),
        (
            "weather/get_current_weather",
            {"city": "Paris", "unit": "metric"},
            "Additional properties",
        ),
        (
            "weather/get_current_weather",
            {"city": "Paris", "units": "kelvin"},
            "units: 'kelvin' is not one of",
        ),
        (
            "weather/get_forecast",
            {"city": "Paris", "days": 30},
            "days: 30 is greater than the maximum",
        ),
        ("aviation/get_flight", {"flight_number": "not a flight"}, "flight_number"),
        ("email/send_email", {"to": [], "subject": "x", "body": "y"}, "to: [] should be non-empty"),
        (
            "currency/convert_currency",
            {"amount": -5, "from_currency": "USD", "to_currency": "EUR"},
            "amount: -5 is less than",
        ),
    ],
)
async def test_invalid_arguments_raise_the_runtimes_message_as_a_typed_error(
    records: list[ToolRecord], tool: str, arguments: dict[str, Any], fragment: str
) -> None:
    sim = _sim(records)
    with pytest.raises(ToolEnvArgumentError) as info:
        sim.validate(tool, arguments)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ToolExecutionError)
    assert info.value.tool_id == tool and fragment in str(info.value)
    name = model_facing_name(tool)
    assert str(info.value) == validate_arguments(name, sim.record(tool).input_schema, arguments)
    with pytest.raises(ToolEnvArgumentError, match=f"invalid arguments for {name}: "):
        sim.respond(tool, arguments)


async def test_non_object_arguments_and_unknown_tools_are_typed_errors(
    records: list[ToolRecord],
) -> None:
    sim = _sim(records)
    with pytest.raises(ToolEnvArgumentError, match=r"arguments: \['Paris'\] is not of type"):
        sim.validate("weather/get_forecast", ["Paris"])  # type: ignore[arg-type]
    with pytest.raises(ToolEnvUnknownToolError, match="weather/get_snowfall"):
        await sim.call("weather", "get_snowfall", {})
    with pytest.raises(ToolEnvNotFoundError, match="unknown city 'Atlantis'"):
        await sim.call("weather", "get_forecast", {"city": "Atlantis"})
    with pytest.raises(ToolEnvNotFoundError, match="no scheduled flight"):
        await sim.call("aviation", "get_flight", {"flight_number": "ZZ9999"})
    with pytest.raises(ToolEnvNotFoundError, match="no driving route"):
        await sim.call("maps", "get_directions", {"origin": "Paris", "destination": "Tokyo"})


def test_bad_simulator_options_are_rejected(records: list[ToolRecord]) -> None:
    with pytest.raises(ValueError, match="failure_rate"):
        ToolEnvSimulator(records, failure_rate=1.5)
    with pytest.raises(ValueError, match="failure_kinds"):
        ToolEnvSimulator(records, failure_kinds=["meteor"])
    with pytest.raises(ValueError, match="duplicate tool id"):
        ToolEnvSimulator([records[0], records[0]])


async def test_pinned_responses_override_handlers_with_defaults_filled(
    records: list[ToolRecord],
) -> None:
    pin = PinnedResponse(
        tool="weather/get_forecast",
        arguments={"city": "Paris", "days": 3},
        response={"pinned": True},
    )
    sim = _sim(records, pinned=[pin])
    assert await sim.call("weather", "get_forecast", {"city": "Paris"}) == {"pinned": True}
    assert await sim.call(
        "weather", "get_forecast", {"city": "Paris", "days": 3, "units": "metric"}
    ) == {"pinned": True}
    assert "days" in await sim.call("weather", "get_forecast", {"city": "Rome"})
    with pytest.raises(ToolEnvUnknownToolError):
        sim.pin("weather/nope", {}, {})


async def _outcomes(sim: ToolEnvSimulator, calls: int) -> list[str]:
    out = []
    for index in range(calls):
        city = ("Paris", "Rome", "Oslo", "Cairo")[index % 4]
        try:
            await sim.call("weather", "get_current_weather", {"city": city})
            out.append("ok")
        except ToolEnvTransientError as exc:
            out.append(type(exc).__name__ + str(getattr(exc, "status", "")))
    return out


async def test_failure_injection_is_reproducible_and_covers_every_kind(
    records: list[ToolRecord],
) -> None:
    first = await _outcomes(_sim(records, 1, failure_rate=0.5), 80)
    assert first == await _outcomes(_sim(records, 1, failure_rate=0.5), 80)
    assert first != await _outcomes(_sim(records, 2, failure_rate=0.5), 80)
    assert {
        "ok",
        "ToolEnvTimeoutError",
        "ToolEnvHTTPError429",
        "ToolEnvHTTPError503",
        "ToolEnvTruncatedError",
    } <= set(first)
    assert set(await _outcomes(_sim(records, 1), 40)) == {"ok"}


async def test_failures_are_typed_and_retries_can_succeed(records: list[ToolRecord]) -> None:
    sim = _sim(records, 4, failure_rate=0.6, failure_kinds=["truncated"])
    successes = 0
    for _ in range(12):
        try:
            await sim.call("finance", "get_stock_quote", {"symbol": "MSFT"})
            successes += 1
        except ToolEnvTruncatedError as exc:
            assert exc.total_chars > len(exc.partial) > 0
    assert 0 < successes < 12
    with pytest.raises(ToolEnvTimeoutError):
        await _sim(records, failure_rate=1.0, failure_kinds=["timeout"]).call(
            "time", "get_current_time", {"city": "Rome"}
        )
    with pytest.raises(ToolEnvHTTPError) as info:
        await _sim(records, failure_rate=1.0, failure_kinds=["rate_limit"]).call(
            "time", "get_current_time", {"city": "Rome"}
        )
    assert info.value.status == 429 and info.value.retry_after_s is not None


async def test_latency_model_is_seeded_and_applied(records: list[ToolRecord]) -> None:
    model = LatencyModel(base_s=0.001, jitter_s=0.002, per_tool_s={"weather": 0.0})
    weather = next(r for r in records if r.provider == "weather")
    finance = next(r for r in records if r.provider == "finance")
    assert model.delay_s(weather, random.Random(1)) == model.delay_s(weather, random.Random(1))
    assert 0.0 <= model.delay_s(weather, random.Random(1)) <= 0.002
    assert 0.001 <= model.delay_s(finance, random.Random(1)) <= 0.003
    sim = _sim(records, latency=model)
    assert (await sim.call("weather", "get_current_weather", {"city": "Rome"}))["location"][
        "city"
    ] == "Rome"


async def test_mutating_calls_are_logged(records: list[ToolRecord]) -> None:
    sim = _sim(records)
    sent = await sim.call(
        "email", "send_email", {"to": ["x@y.com"], "subject": "Hi", "body": "Hello"}
    )
    await sim.call("weather", "get_forecast", {"city": "Rome"})
    assert [m["tool"] for m in sim.mutations] == ["email/send_email"]
    assert (
        sim.mutations[0]["response"]
        == sent
        == await sim.call(
            "email", "send_email", {"to": ["x@y.com"], "subject": "Hi", "body": "Hello"}
        )
    )


SCHEMA_ONLY = ToolRecord(
    name="get_invoice",
    provider="billing_api",
    description="Fetch an invoice.",
    input_schema={
        "type": "object",
        "properties": {"invoice_id": {"type": "string"}, "currency": {"type": "string"}},
        "required": ["invoice_id"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "invoice_id": {"type": "string"},
            "status": {"enum": ["paid", "open", "void"]},
            "total": {"type": "number", "minimum": 0, "maximum": 500},
            "issued_at": {"type": "string", "format": "date-time"},
            "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}, "minItems": 1},
            "customer": {
                "anyOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "properties": {"email": {"type": "string"}},
                        "required": ["email"],
                    },
                ]
            },
        },
        "required": ["invoice_id", "status", "total", "lines", "customer"],
        "$defs": {
            "line": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "qty": {"type": "integer", "minimum": 1, "maximum": 9},
                },
                "required": ["sku", "qty"],
            }
        },
    },
)
TEMPLATE_ONLY = ToolRecord(
    name="ping",
    provider="status_api",
    response_template={"ok": True, "latency_ms": 12, "region": "eu-west-1"},
)


async def test_generic_responses_follow_the_schema_echo_arguments_and_are_deterministic() -> None:
    sim = ToolEnvSimulator([SCHEMA_ONLY, TEMPLATE_ONLY], seed=3)
    first = await sim.call("billing_api", "get_invoice", {"invoice_id": "INV-1"})
    assert not list(Draft202012Validator(SCHEMA_ONLY.output_schema).iter_errors(first))
    assert first["invoice_id"] == "INV-1" and "@" in first["customer"]["email"]
    assert first == await ToolEnvSimulator([SCHEMA_ONLY], seed=3).call(
        "billing_api", "get_invoice", {"invoice_id": "INV-1"}
    )
    assert first != await sim.call("billing_api", "get_invoice", {"invoice_id": "INV-2"})
    assert first != generate_response(SCHEMA_ONLY, {"invoice_id": "INV-1"}, seed=4)
    ping = await sim.call("status_api", "ping", {})
    assert set(ping) == {"ok", "latency_ms", "region"} and isinstance(ping["latency_ms"], int)
    bare = generate_response(ToolRecord(name="noop", provider="x"), {}, seed=0)
    assert bare["tool"] == "x/noop" and bare["status"] == "ok"

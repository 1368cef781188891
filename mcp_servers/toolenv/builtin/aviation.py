"""The ``aviation`` provider: flight schedules and status, airports, airport weather, bookings."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..errors import ToolEnvNotFoundError
from ..geo import City
from ..world import Flight, World
from ._common import DATE, parse_day, stable_id
from ._registry import Provider
from ._schema import array, integer, number, obj, string

provider = Provider("aviation", "Travel")

FLIGHT_NUMBER = string(
    "IATA flight number: airline code followed by digits, e.g. 'LH400'.",
    pattern=r"^\s*[A-Za-z0-9]{2}\s?\d{1,4}\s*$",
)
AIRPORT = string("Three-letter IATA airport code, e.g. 'FRA'.", pattern=r"^[A-Za-z]{3}$")
PLACE = string("IATA airport code or city name.", min_length=2)
CABIN = string("Cabin class.", enum=("economy", "premium_economy", "business"), default="economy")
_AIRPORT_OUT = obj(
    {"code": string(), "name": string(), "city": string(), "country": string()}, ("code", "city")
)
_FLIGHT_OUT = obj(
    {
        "flight_number": string(),
        "airline": string(),
        "origin": _AIRPORT_OUT,
        "destination": _AIRPORT_OUT,
        "departure_time": string(),
        "arrival_time": string(),
        "arrival_day_offset": integer(),
        "duration_minutes": integer(),
        "distance_km": integer(),
        "aircraft": string(),
    },
    ("flight_number", "airline", "origin", "destination", "departure_time", "arrival_time"),
)


def _airport(city: City) -> dict[str, Any]:
    return {
        "code": city.airport,
        "name": city.airport_name,
        "city": city.name,
        "country": city.country,
    }


def _flight(flight: Flight) -> dict[str, Any]:
    return {
        "flight_number": flight.number,
        "airline": flight.airline,
        "origin": _airport(flight.origin),
        "destination": _airport(flight.destination),
        "departure_time": flight.departure_time,
        "arrival_time": flight.arrival_time,
        "arrival_day_offset": flight.arrival_day_offset,
        "duration_minutes": flight.duration_minutes,
        "distance_km": flight.distance_km,
        "aircraft": flight.aircraft,
    }


def _airport_city(world: World, code: str) -> City:
    city = world.city(code)
    if city.airport != code.strip().upper():
        raise ToolEnvNotFoundError(f"unknown airport code {code!r}")
    return city


@provider.tool(
    "get_flight",
    (
        "Schedule of a flight by its flight number: airline, origin and destination airports and "
        "cities, local departure/arrival times, duration."
    ),
    params={"flight_number": FLIGHT_NUMBER},
    required=("flight_number",),
    output=_FLIGHT_OUT,
)
def _get_flight(world: World, args: dict[str, Any]) -> dict[str, Any]:
    return _flight(world.flight(args["flight_number"]))


@provider.tool(
    "get_flight_status",
    (
        "Live operational status of a flight on a date: on time, delayed (with minutes) or "
        "cancelled, plus terminal and gate."
    ),
    params={"flight_number": FLIGHT_NUMBER, "date": DATE},
    required=("flight_number",),
    output=obj(
        {
            "flight_number": string(),
            "date": string(),
            "status": string(enum=("on time", "delayed", "cancelled")),
            "delay_minutes": integer(minimum=0),
            "scheduled_departure": string(),
            "estimated_departure": string(),
            "terminal": string(),
            "gate": string(),
        },
        ("flight_number", "date", "status", "delay_minutes"),
    ),
)
def _get_flight_status(world: World, args: dict[str, Any]) -> dict[str, Any]:
    flight = world.flight(args["flight_number"])
    day = parse_day(world, args.get("date"), horizon=(-3, 3))
    status = world.flight_status(flight, day)
    scheduled = datetime.fromisoformat(f"{day.isoformat()}T{flight.departure_time}")
    estimated = scheduled + timedelta(minutes=int(status["delay_minutes"]))
    return {
        "flight_number": flight.number,
        "date": day.isoformat(),
        **status,
        "scheduled_departure": scheduled.strftime("%Y-%m-%dT%H:%M"),
        "estimated_departure": estimated.strftime("%Y-%m-%dT%H:%M"),
        "terminal": flight.terminal,
        "gate": flight.gate,
    }


@provider.tool(
    "search_flights",
    (
        "Find direct flights between two airports or cities on a date, with fares in USD for the "
        "chosen cabin, cheapest first."
    ),
    params={
        "origin": PLACE,
        "destination": PLACE,
        "date": DATE,
        "cabin": CABIN,
        "max_results": integer("Maximum number of flights.", minimum=1, maximum=20, default=5),
    },
    required=("origin", "destination", "date"),
    output=obj(
        {
            "origin": string(),
            "destination": string(),
            "date": string(),
            "cabin": string(),
            "flights": array(
                obj(
                    {
                        "flight_number": string(),
                        "airline": string(),
                        "departure_time": string(),
                        "arrival_time": string(),
                        "duration_minutes": integer(),
                        "price_usd": number(),
                    },
                    ("flight_number", "price_usd"),
                )
            ),
        },
        ("origin", "destination", "date", "flights"),
    ),
)
def _search_flights(world: World, args: dict[str, Any]) -> dict[str, Any]:
    origin, dest = world.city(args["origin"]), world.city(args["destination"])
    day = parse_day(world, args["date"], horizon=(0, 60))
    cabin = args.get("cabin", "economy")
    found = [
        f
        for f in world.flights.values()
        if f.origin == origin
        and f.destination == dest
        and world.flight_status(f, day)["status"] != "cancelled"
    ]
    found.sort(key=lambda f: (f.fares_usd[cabin], f.number))
    return {
        "origin": origin.airport,
        "destination": dest.airport,
        "date": day.isoformat(),
        "cabin": cabin,
        "flights": [
            {
                "flight_number": f.number,
                "airline": f.airline,
                "departure_time": f.departure_time,
                "arrival_time": f.arrival_time,
                "duration_minutes": f.duration_minutes,
                "price_usd": f.fares_usd[cabin],
            }
            for f in found[: args.get("max_results", 5)]
        ],
    }


@provider.tool(
    "get_airport",
    "Airport information by IATA code: name, city, country, coordinates, time zone.",
    params={"code": AIRPORT},
    required=("code",),
    output=obj(
        {
            "code": string(),
            "name": string(),
            "city": string(),
            "country": string(),
            "lat": number(),
            "lon": number(),
            "timezone": string(),
            "utc_offset": number(),
        },
        ("code", "name", "city", "country"),
    ),
)
def _get_airport(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = _airport_city(world, args["code"])
    return {
        **_airport(city),
        "lat": city.lat,
        "lon": city.lon,
        "timezone": city.timezone,
        "utc_offset": city.utc_offset,
    }


@provider.tool(
    "get_airport_weather",
    (
        "Aviation weather observation (METAR-style) at an airport: temperature, wind in knots, "
        "visibility."
    ),
    params={"code": AIRPORT},
    required=("code",),
    output=obj(
        {
            "airport": string(),
            "observed_at": string(),
            "temperature_c": number(),
            "wind_kt": integer(),
            "visibility_km": number(),
            "condition": string(),
            "metar": string(),
        },
        ("airport", "temperature_c", "metar"),
    ),
)
def _get_airport_weather(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = _airport_city(world, args["code"])
    now = world.current_weather(city)
    temp = float(now["temperature_c"])
    wind_kt = round(float(now["wind_kph"]) / 1.852)
    visibility = (
        2.0 if now["condition"] in ("fog",) else 6.0 if "rain" in str(now["condition"]) else 10.0
    )
    metar = (
        f"{city.airport} {world.now_utc:%d%H}00Z {wind_kt:02d}KT "
        f"{int(visibility * 1000) if visibility < 10 else 9999} "
        f"{'M' if temp < 0 else ''}{abs(round(temp)):02d}"
    )
    return {
        "airport": city.airport,
        "observed_at": now["observed_at"],
        "temperature_c": temp,
        "wind_kt": wind_kt,
        "visibility_km": visibility,
        "condition": now["condition"],
        "metar": metar,
    }


@provider.tool(
    "list_departures",
    "Scheduled departures from an airport today, ordered by departure time.",
    params={
        "code": AIRPORT,
        "limit": integer("Maximum number of departures.", minimum=1, maximum=50, default=10),
    },
    required=("code",),
    output=obj(
        {
            "airport": string(),
            "departures": array(
                obj(
                    {
                        "flight_number": string(),
                        "destination": string(),
                        "departure_time": string(),
                        "status": string(),
                    },
                    ("flight_number", "destination", "departure_time"),
                )
            ),
        },
        ("airport", "departures"),
    ),
)
def _list_departures(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = _airport_city(world, args["code"])
    flights = sorted(
        (f for f in world.flights.values() if f.origin == city),
        key=lambda f: (f.departure_time, f.number),
    )
    return {
        "airport": city.airport,
        "departures": [
            {
                "flight_number": f.number,
                "destination": f.destination.airport,
                "departure_time": f.departure_time,
                "status": str(world.flight_status(f, world.today)["status"]),
            }
            for f in flights[: args.get("limit", 10)]
        ],
    }


@provider.tool(
    "book_flight",
    (
        "Book a seat on a flight for a passenger on a date; returns a booking reference and the "
        "fare charged."
    ),
    params={
        "flight_number": FLIGHT_NUMBER,
        "date": DATE,
        "passenger_name": string("Full name as on the passport.", min_length=2),
        "cabin": CABIN,
    },
    required=("flight_number", "date", "passenger_name"),
    output=obj(
        {
            "booking_id": string(),
            "status": string(enum=("confirmed",)),
            "flight_number": string(),
            "date": string(),
            "passenger_name": string(),
            "cabin": string(),
            "price_usd": number(),
        },
        ("booking_id", "status", "price_usd"),
    ),
    read_only=False,
)
def _book_flight(world: World, args: dict[str, Any]) -> dict[str, Any]:
    flight = world.flight(args["flight_number"])
    day = parse_day(world, args["date"], horizon=(0, 60))
    cabin = args.get("cabin", "economy")
    return {
        "booking_id": stable_id("BK-", flight.number, day, args["passenger_name"], cabin),
        "status": "confirmed",
        "flight_number": flight.number,
        "date": day.isoformat(),
        "passenger_name": args["passenger_name"],
        "cabin": cabin,
        "price_usd": flight.fares_usd[cabin],
    }


@provider.tool(
    "cancel_flight_booking",
    "Cancel a flight booking by its booking reference; the refund is returned in USD.",
    params={
        "booking_id": string("Booking reference such as 'BK-1A2B3C'.", pattern=r"^BK-[A-Z0-9]{6}$")
    },
    required=("booking_id",),
    output=obj(
        {"booking_id": string(), "status": string(enum=("cancelled",)), "refund_usd": number()},
        ("booking_id", "status"),
    ),
    read_only=False,
    destructive=True,
)
def _cancel_flight_booking(world: World, args: dict[str, Any]) -> dict[str, Any]:
    rng = world.rng("refund", args["booking_id"])
    return {
        "booking_id": args["booking_id"],
        "status": "cancelled",
        "refund_usd": round(rng.uniform(50, 900), 2),
    }

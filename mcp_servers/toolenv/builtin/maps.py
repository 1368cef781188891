"""The ``maps`` and ``time`` providers.

``maps``: geocoding, distances, routes, places; ``time``: clocks, time zones.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..errors import ToolEnvNotFoundError
from ..geo import CITIES, City, haversine_km
from ..world import World
from ._common import CITY
from ._registry import Provider
from ._schema import array, boolean, integer, number, obj, string

maps = Provider("maps", "Maps")
clock = Provider("time", "Time")

_SPEEDS_KPH = {"driving": 75.0, "transit": 45.0, "cycling": 16.0, "walking": 4.8}
_ROAD_FACTOR = {"driving": 1.25, "transit": 1.3, "cycling": 1.2, "walking": 1.15}
_MAX_KM = {"driving": 5000.0, "transit": 3000.0, "cycling": 1500.0, "walking": 600.0}
_CONTINENT = {
    "EU": {"DE", "GB", "FR", "ES", "IT", "NL", "CH", "AT", "SE", "NO", "TR"},
    "NA": {"US", "CA", "MX"},
    "ASIA": {"AE", "IN", "SG", "HK", "CN", "KR", "JP", "TR"},
}


def _same_landmass(a: City, b: City) -> bool:
    return a == b or any(
        a.country_code in group and b.country_code in group for group in _CONTINENT.values()
    )


@maps.tool(
    "geocode",
    "Turn a city name or address into coordinates (latitude, longitude), country and the "
    "currency used there.",
    params={"query": string("City name or address.", min_length=1)},
    required=("query",),
    output=obj(
        {
            "query": string(),
            "name": string(),
            "country": string(),
            "country_code": string(),
            "currency": string("ISO 4217 code of the local currency."),
            "lat": number(),
            "lon": number(),
        },
        ("name", "lat", "lon"),
    ),
)
def _geocode(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["query"])
    return {
        "query": args["query"],
        "name": city.name,
        "country": city.country,
        "country_code": city.country_code,
        "currency": city.currency,
        "lat": city.lat,
        "lon": city.lon,
    }


@maps.tool(
    "reverse_geocode",
    "Find the nearest known city to a latitude/longitude point.",
    params={
        "lat": number("Latitude in degrees.", minimum=-90, maximum=90),
        "lon": number("Longitude in degrees.", minimum=-180, maximum=180),
    },
    required=("lat", "lon"),
    output=obj(
        {"name": string(), "country": string(), "distance_km": number()},
        ("name", "country", "distance_km"),
    ),
)
def _reverse_geocode(world: World, args: dict[str, Any]) -> dict[str, Any]:
    lat, lon = float(args["lat"]), float(args["lon"])
    city = min(CITIES, key=lambda c: haversine_km(lat, lon, c.lat, c.lon))
    return {
        "name": city.name,
        "country": city.country,
        "distance_km": round(haversine_km(lat, lon, city.lat, city.lon), 1),
    }


@maps.tool(
    "get_distance",
    "Straight-line (great-circle) distance between two cities in kilometres and miles.",
    params={"origin": CITY, "destination": CITY},
    required=("origin", "destination"),
    output=obj(
        {
            "origin": string(),
            "destination": string(),
            "distance_km": number(),
            "distance_miles": number(),
        },
        ("origin", "destination", "distance_km"),
    ),
)
def _get_distance(world: World, args: dict[str, Any]) -> dict[str, Any]:
    a, b = world.city(args["origin"]), world.city(args["destination"])
    km = haversine_km(a.lat, a.lon, b.lat, b.lon)
    return {
        "origin": a.name,
        "destination": b.name,
        "distance_km": round(km, 1),
        "distance_miles": round(km / 1.609344, 1),
    }


@maps.tool(
    "get_directions",
    (
        "Route between two cities by car, public transit, bicycle or on foot: road distance, "
        "travel time and main steps."
    ),
    params={
        "origin": CITY,
        "destination": CITY,
        "mode": string("Travel mode.", enum=tuple(_SPEEDS_KPH), default="driving"),
    },
    required=("origin", "destination"),
    output=obj(
        {
            "origin": string(),
            "destination": string(),
            "mode": string(),
            "distance_km": number(),
            "duration_minutes": integer(),
            "steps": array(string()),
        },
        ("origin", "destination", "mode", "distance_km", "duration_minutes"),
    ),
)
def _get_directions(world: World, args: dict[str, Any]) -> dict[str, Any]:
    a, b = world.city(args["origin"]), world.city(args["destination"])
    mode = args.get("mode", "driving")
    km = haversine_km(a.lat, a.lon, b.lat, b.lon) * _ROAD_FACTOR[mode]
    if km > _MAX_KM[mode] or not _same_landmass(a, b):
        raise ToolEnvNotFoundError(f"no {mode} route from {a.name} to {b.name}")
    return {
        "origin": a.name,
        "destination": b.name,
        "mode": mode,
        "distance_km": round(km, 1),
        "duration_minutes": round(km / _SPEEDS_KPH[mode] * 60),
        "steps": [
            f"Leave {a.name} heading {'east' if b.lon > a.lon else 'west'}",
            f"Continue for about {round(km * 0.9)} km",
            f"Arrive in {b.name}",
        ],
    }


@maps.tool(
    "search_places",
    (
        "Points of interest of one category (restaurants, cafes, museums, parks, …) near a city "
        "centre, with ratings."
    ),
    params={
        "city": CITY,
        "category": string("Kind of place.", enum=World.place_kinds()),
        "open_now": boolean("Only places open right now.", default=False),
    },
    required=("city", "category"),
    output=obj(
        {
            "city": string(),
            "category": string(),
            "places": array(
                obj(
                    {
                        "place_id": string(),
                        "name": string(),
                        "category": string(),
                        "rating": number(),
                        "address": string(),
                        "lat": number(),
                        "lon": number(),
                        "open_now": boolean(),
                    },
                    ("place_id", "name", "rating"),
                )
            ),
        },
        ("city", "category", "places"),
    ),
)
def _search_places(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    places = world.places(city, args["category"])
    if args.get("open_now"):
        places = [p for p in places if p["open_now"]]
    return {"city": city.name, "category": args["category"], "places": places}


@maps.tool(
    "get_timezone",
    "Time zone of a city: IANA name and UTC offset in hours.",
    params={"city": CITY},
    required=("city",),
    output=obj(
        {
            "location": obj({"city": string(), "country": string()}, ("city",)),
            "timezone": string(),
            "utc_offset": number(),
        },
        ("timezone", "utc_offset"),
    ),
)
def _get_timezone(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    return {
        "location": {"city": city.name, "country": city.country},
        "timezone": city.timezone,
        "utc_offset": city.utc_offset,
    }


def _offset_label(hours: float) -> str:
    sign = "+" if hours >= 0 else "-"
    minutes = round(abs(hours) * 60)
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


@clock.tool(
    "get_current_time",
    "Current local date and time in a city.",
    params={"city": CITY},
    required=("city",),
    output=obj(
        {
            "city": string(),
            "local_time": string(),
            "weekday": string(),
            "timezone": string(),
            "utc_offset": string(),
        },
        ("city", "local_time", "timezone"),
    ),
)
def _get_current_time(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    local = world.local_now(city)
    return {
        "city": city.name,
        "local_time": local.strftime("%Y-%m-%dT%H:%M"),
        "weekday": local.strftime("%A"),
        "timezone": city.timezone,
        "utc_offset": _offset_label(city.utc_offset),
    }


@clock.tool(
    "convert_time",
    "Convert a local clock time in one city to the corresponding local time in another city.",
    params={
        "time": string("Clock time as HH:MM (24 h).", pattern=r"^([01]\d|2[0-3]):[0-5]\d$"),
        "from_city": CITY,
        "to_city": CITY,
    },
    required=("time", "from_city", "to_city"),
    output=obj(
        {
            "time": string(),
            "from_city": string(),
            "to_city": string(),
            "converted_time": string(),
            "day_shift": integer(),
        },
        ("converted_time", "day_shift"),
    ),
)
def _convert_time(world: World, args: dict[str, Any]) -> dict[str, Any]:
    a, b = world.city(args["from_city"]), world.city(args["to_city"])
    start = datetime.combine(world.today, datetime.strptime(args["time"], "%H:%M").time())
    moved = start + timedelta(hours=b.utc_offset - a.utc_offset)
    return {
        "time": args["time"],
        "from_city": a.name,
        "to_city": b.name,
        "converted_time": moved.strftime("%H:%M"),
        "day_shift": (moved.date() - start.date()).days,
    }


@clock.tool(
    "get_time_difference",
    "How many hours one city is ahead of (positive) or behind (negative) another.",
    params={"city": CITY, "other_city": CITY},
    required=("city", "other_city"),
    output=obj(
        {"city": string(), "other_city": string(), "hours_ahead": number()},
        ("city", "other_city", "hours_ahead"),
    ),
)
def _get_time_difference(world: World, args: dict[str, Any]) -> dict[str, Any]:
    a, b = world.city(args["city"]), world.city(args["other_city"])
    return {"city": a.name, "other_city": b.name, "hours_ahead": a.utc_offset - b.utc_offset}

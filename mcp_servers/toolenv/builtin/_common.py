"""Parameter schemas and helpers shared by the built-in providers."""

from __future__ import annotations

import hashlib
import json
from datetime import date, timedelta
from typing import Any

from ..errors import ToolEnvNotFoundError
from ..geo import City
from ..world import World
from ._schema import Schema, number, obj, string

__all__ = [
    "CITY",
    "CITY_REF",
    "DATE",
    "DATETIME",
    "UNITS",
    "city_ref",
    "day_offset",
    "parse_day",
    "stable_id",
    "temperature",
]

CITY = string("City name, for example 'Paris', 'New York' or 'Tokyo'.", min_length=1)
DATE = string("Calendar date as YYYY-MM-DD.", pattern=r"^\d{4}-\d{2}-\d{2}$")
DATETIME = string(
    "Local date and time as YYYY-MM-DDTHH:MM.", pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$"
)
UNITS = string("Unit system for temperatures.", enum=("metric", "imperial"), default="metric")
CITY_REF: Schema = obj(
    {"city": string(), "country": string(), "lat": number(), "lon": number()},
    ("city", "country"),
)


def city_ref(city: City) -> dict[str, Any]:
    """The compact city object embedded in many responses."""
    return {"city": city.name, "country": city.country, "lat": city.lat, "lon": city.lon}


def temperature(celsius: float, units: str) -> float:
    """Convert a °C value to the requested unit system (one decimal)."""
    return round(celsius * 9 / 5 + 32, 1) if units == "imperial" else celsius


def parse_day(world: World, text: str | None, *, horizon: tuple[int, int] = (-30, 60)) -> date:
    """Parse ``YYYY-MM-DD`` (today when ``None``) and check its range.

    The day must lie within ``horizon`` days of today.
    """
    if text is None:
        return world.today
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ToolEnvNotFoundError(f"{text!r} is not a real calendar date") from None
    low, high = horizon
    if not low <= (day - world.today).days <= high:
        first, last = world.today + timedelta(days=low), world.today + timedelta(days=high)
        raise ToolEnvNotFoundError(f"no data for {text}; available from {first} to {last}")
    return day


def day_offset(world: World, day: date) -> int:
    """Days from the world's today to ``day``."""
    return (day - world.today).days


def stable_id(prefix: str, *parts: Any, length: int = 6) -> str:
    """A deterministic identifier derived from ``parts`` (same request, same id)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return f"{prefix}{digest[:length].upper()}"

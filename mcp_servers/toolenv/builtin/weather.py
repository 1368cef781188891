"""The ``weather`` provider: current conditions, forecasts, air quality, alerts, sun times."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from ..world import CONDITIONS, World
from ._common import CITY, CITY_REF, DATE, UNITS, city_ref, parse_day, temperature
from ._registry import Provider
from ._schema import array, integer, number, obj, string

provider = Provider("weather", "Weather")

_UNITS_OUT = string("Unit of the temperatures.", enum=("celsius", "fahrenheit"))


def _unit_name(units: str) -> str:
    return "fahrenheit" if units == "imperial" else "celsius"


@provider.tool(
    "get_current_weather",
    (
        "Current weather conditions (temperature, feels-like, sky, humidity, wind) in a city "
        "right now."
    ),
    params={"city": CITY, "units": UNITS},
    required=("city",),
    output=obj(
        {
            "location": CITY_REF,
            "observed_at": string(),
            "temperature": number(),
            "feels_like": number(),
            "units": _UNITS_OUT,
            "condition": string(enum=CONDITIONS),
            "humidity": integer(),
            "wind_kph": number(),
        },
        ("location", "temperature", "units", "condition"),
    ),
)
def _get_current_weather(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city, units = world.city(args["city"]), args.get("units", "metric")
    now = world.current_weather(city)
    return {
        "location": city_ref(city),
        "observed_at": now["observed_at"],
        "temperature": temperature(float(now["temperature_c"]), units),
        "feels_like": temperature(float(now["feels_like_c"]), units),
        "units": _unit_name(units),
        "condition": now["condition"],
        "humidity": now["humidity"],
        "wind_kph": now["wind_kph"],
    }


@provider.tool(
    "get_forecast",
    (
        "Daily weather forecast for a city: high/low temperature, conditions and chance of rain "
        "for up to 7 days starting today."
    ),
    params={
        "city": CITY,
        "days": integer("Number of days, starting today.", minimum=1, maximum=7, default=3),
        "units": UNITS,
    },
    required=("city",),
    output=obj(
        {
            "location": CITY_REF,
            "units": _UNITS_OUT,
            "days": array(
                obj(
                    {
                        "date": string(),
                        "high": number(),
                        "low": number(),
                        "condition": string(enum=CONDITIONS),
                        "precipitation_chance": integer(minimum=0, maximum=100),
                    },
                    ("date", "high", "low", "condition"),
                )
            ),
        },
        ("location", "units", "days"),
    ),
)
def _get_forecast(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city, units = world.city(args["city"]), args.get("units", "metric")
    days = []
    for offset in range(args.get("days", 3)):
        day = world.weather_day(city, offset)
        days.append(
            {
                "date": day.date,
                "high": temperature(day.high_c, units),
                "low": temperature(day.low_c, units),
                "condition": day.condition,
                "precipitation_chance": day.precipitation_chance,
            }
        )
    return {"location": city_ref(city), "units": _unit_name(units), "days": days}


@provider.tool(
    "get_hourly_forecast",
    "Hour-by-hour temperature and conditions for the next hours in a city (metric units).",
    params={
        "city": CITY,
        "hours": integer(
            "How many hours ahead, starting with the current hour.",
            minimum=1,
            maximum=48,
            default=12,
        ),
    },
    required=("city",),
    output=obj(
        {
            "location": CITY_REF,
            "hours": array(
                obj(
                    {
                        "time": string(),
                        "temperature_c": number(),
                        "condition": string(enum=CONDITIONS),
                    },
                    ("time", "temperature_c"),
                )
            ),
        },
        ("location", "hours"),
    ),
)
def _get_hourly_forecast(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    start = world.local_now(city)
    hours = []
    for step in range(args.get("hours", 12)):
        moment = start + timedelta(hours=step)
        offset = (moment.date() - world.today).days
        hours.append(
            {
                "time": moment.strftime("%Y-%m-%dT%H:00"),
                "temperature_c": world.hourly_temp_c(city, offset, moment.hour),
                "condition": world.weather_day(city, offset).condition,
            }
        )
    return {"location": city_ref(city), "hours": hours}


_AQI_BANDS = (
    (50, "good"),
    (100, "moderate"),
    (150, "unhealthy for sensitive groups"),
    (200, "unhealthy"),
    (500, "very unhealthy"),
)


@provider.tool(
    "get_air_quality",
    "Air quality index (US AQI) and particulate levels (PM2.5, PM10) in a city.",
    params={"city": CITY},
    required=("city",),
    output=obj(
        {
            "location": CITY_REF,
            "aqi": integer(minimum=0),
            "category": string(enum=[band for _, band in _AQI_BANDS]),
            "pm2_5": number(),
            "pm10": number(),
            "dominant_pollutant": string(),
        },
        ("location", "aqi", "category"),
    ),
)
def _get_air_quality(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    rng = world.rng("aqi", city.key, world.today)
    aqi = rng.randint(12, 180)
    category = next(band for limit, band in _AQI_BANDS if aqi <= limit)
    pm25 = round(aqi * 0.35 * rng.uniform(0.8, 1.2), 1)
    return {
        "location": city_ref(city),
        "aqi": aqi,
        "category": category,
        "pm2_5": pm25,
        "pm10": round(pm25 * rng.uniform(1.3, 2.0), 1),
        "dominant_pollutant": rng.choice(("pm2_5", "ozone", "no2")),
    }


@provider.tool(
    "get_weather_alerts",
    (
        "Active severe-weather warnings (heat, storms, heavy rain, wind, frost) issued for a city "
        "over the next 3 days."
    ),
    params={"city": CITY},
    required=("city",),
    output=obj(
        {
            "location": CITY_REF,
            "alerts": array(
                obj(
                    {
                        "type": string(),
                        "severity": string(enum=("minor", "moderate", "severe")),
                        "headline": string(),
                        "date": string(),
                    },
                    ("type", "severity", "headline"),
                )
            ),
        },
        ("location", "alerts"),
    ),
)
def _get_weather_alerts(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    alerts = []
    for offset in range(3):
        day = world.weather_day(city, offset)
        found = []
        if day.high_c >= 32:
            found.append(
                (
                    "heat",
                    "severe" if day.high_c >= 36 else "moderate",
                    f"Heat warning: up to {day.high_c} °C",
                )
            )
        if day.condition == "thunderstorm":
            found.append(("thunderstorm", "moderate", "Thunderstorms with local hail possible"))
        if day.wind_kph >= 40:
            found.append(("wind", "minor", f"Gusty winds around {day.wind_kph} km/h"))
        if day.low_c <= -3:
            found.append(("frost", "minor", f"Frost down to {day.low_c} °C"))
        alerts.extend((kind, severity, headline, day.date) for kind, severity, headline in found)
    return {
        "location": city_ref(city),
        "alerts": [{"type": t, "severity": s, "headline": h, "date": d} for t, s, h, d in alerts],
    }


@provider.tool(
    "get_sun_times",
    "Sunrise, sunset and day length in a city on a date (local time).",
    params={"city": CITY, "date": DATE},
    required=("city",),
    output=obj(
        {
            "location": CITY_REF,
            "date": string(),
            "sunrise": string(),
            "sunset": string(),
            "day_length_minutes": integer(),
        },
        ("location", "date", "sunrise", "sunset"),
    ),
)
def _get_sun_times(world: World, args: dict[str, Any]) -> dict[str, Any]:
    city = world.city(args["city"])
    day = parse_day(world, args.get("date"), horizon=(-365, 365))
    declination = -23.44 * math.cos(2 * math.pi * (day.timetuple().tm_yday + 10) / 365)
    cos_h = -math.tan(math.radians(city.lat)) * math.tan(math.radians(declination))
    half_day = math.degrees(math.acos(max(-1.0, min(1.0, cos_h)))) / 15
    noon = 12 + (15 * city.utc_offset - city.lon) / 15
    rise, set_ = noon - half_day, noon + half_day

    def clock(hours: float) -> str:
        minutes = round(hours * 60) % (24 * 60)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"

    return {
        "location": city_ref(city),
        "date": day.isoformat(),
        "sunrise": clock(rise),
        "sunset": clock(set_),
        "day_length_minutes": round(2 * half_day * 60),
    }

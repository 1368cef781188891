"""Static geography of the simulated world: real cities, their airports, currencies and offsets.

These are public facts (coordinates rounded to 0.01°, standard-time UTC offsets; daylight saving
is ignored so the world needs no tz database). Everything that changes over time (weather,
prices, schedules) is seeded in :mod:`world`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from paraagent_runtime.checker import normalize_name

__all__ = ["CITIES", "City", "haversine_km"]


@dataclass(frozen=True)
class City:
    """A city of the world with its main airport."""

    name: str
    country: str
    country_code: str
    lat: float
    lon: float
    utc_offset: float
    timezone: str
    currency: str
    airport: str
    airport_name: str
    language: str

    @property
    def key(self) -> str:
        """The normalized lookup key of the city's name."""
        return normalize_name(self.name)


CITIES: tuple[City, ...] = (
    City("Frankfurt", "Germany", "DE", 50.11, 8.68, 1,
         "Europe/Berlin", "EUR", "FRA", "Frankfurt Airport", "de"),
    City("Berlin", "Germany", "DE", 52.52, 13.40, 1,
         "Europe/Berlin", "EUR", "BER", "Berlin Brandenburg Airport", "de"),
    City("Munich", "Germany", "DE", 48.14, 11.58, 1,
         "Europe/Berlin", "EUR", "MUC", "Munich Airport", "de"),
    City("London", "United Kingdom", "GB", 51.51, -0.13, 0,
         "Europe/London", "GBP", "LHR", "Heathrow Airport", "en"),
    City("Paris", "France", "FR", 48.86, 2.35, 1,
         "Europe/Paris", "EUR", "CDG", "Charles de Gaulle Airport", "fr"),
    City("Madrid", "Spain", "ES", 40.42, -3.70, 1,
         "Europe/Madrid", "EUR", "MAD", "Adolfo Suárez Madrid–Barajas Airport", "es"),
    City("Rome", "Italy", "IT", 41.90, 12.50, 1,
         "Europe/Rome", "EUR", "FCO", "Leonardo da Vinci–Fiumicino Airport", "it"),
    City("Amsterdam", "Netherlands", "NL", 52.37, 4.90, 1,
         "Europe/Amsterdam", "EUR", "AMS", "Amsterdam Airport Schiphol", "nl"),
    City("Zurich", "Switzerland", "CH", 47.37, 8.54, 1,
         "Europe/Zurich", "CHF", "ZRH", "Zurich Airport", "de"),
    City("Vienna", "Austria", "AT", 48.21, 16.37, 1,
         "Europe/Vienna", "EUR", "VIE", "Vienna International Airport", "de"),
    City("Stockholm", "Sweden", "SE", 59.33, 18.07, 1,
         "Europe/Stockholm", "SEK", "ARN", "Stockholm Arlanda Airport", "sv"),
    City("Oslo", "Norway", "NO", 59.91, 10.75, 1,
         "Europe/Oslo", "NOK", "OSL", "Oslo Airport Gardermoen", "no"),
    City("Istanbul", "Turkey", "TR", 41.01, 28.98, 3,
         "Europe/Istanbul", "TRY", "IST", "Istanbul Airport", "tr"),
    City("Dubai", "United Arab Emirates", "AE", 25.20, 55.27, 4,
         "Asia/Dubai", "AED", "DXB", "Dubai International Airport", "ar"),
    City("Cairo", "Egypt", "EG", 30.04, 31.24, 2,
         "Africa/Cairo", "EGP", "CAI", "Cairo International Airport", "ar"),
    City("Johannesburg", "South Africa", "ZA", -26.20, 28.05, 2,
         "Africa/Johannesburg", "ZAR", "JNB", "O. R. Tambo International Airport", "en"),
    City("Mumbai", "India", "IN", 19.08, 72.88, 5.5,
         "Asia/Kolkata", "INR", "BOM", "Chhatrapati Shivaji Maharaj International Airport", "hi"),
    City("Singapore", "Singapore", "SG", 1.35, 103.82, 8,
         "Asia/Singapore", "SGD", "SIN", "Singapore Changi Airport", "en"),
    City("Hong Kong", "Hong Kong", "HK", 22.32, 114.17, 8,
         "Asia/Hong_Kong", "HKD", "HKG", "Hong Kong International Airport", "zh"),
    City("Beijing", "China", "CN", 39.90, 116.41, 8,
         "Asia/Shanghai", "CNY", "PEK", "Beijing Capital International Airport", "zh"),
    City("Seoul", "South Korea", "KR", 37.57, 126.98, 9,
         "Asia/Seoul", "KRW", "ICN", "Incheon International Airport", "ko"),
    City("Tokyo", "Japan", "JP", 35.68, 139.69, 9,
         "Asia/Tokyo", "JPY", "HND", "Haneda Airport", "ja"),
    City("Sydney", "Australia", "AU", -33.87, 151.21, 10,
         "Australia/Sydney", "AUD", "SYD", "Sydney Kingsford Smith Airport", "en"),
    City("New York", "United States", "US", 40.71, -74.01, -5,
         "America/New_York", "USD", "JFK", "John F. Kennedy International Airport", "en"),
    City("Chicago", "United States", "US", 41.88, -87.63, -6,
         "America/Chicago", "USD", "ORD", "O'Hare International Airport", "en"),
    City("Los Angeles", "United States", "US", 34.05, -118.24, -8,
         "America/Los_Angeles", "USD", "LAX", "Los Angeles International Airport", "en"),
    City("San Francisco", "United States", "US", 37.77, -122.42, -8,
         "America/Los_Angeles", "USD", "SFO", "San Francisco International Airport", "en"),
    City("Toronto", "Canada", "CA", 43.65, -79.38, -5,
         "America/Toronto", "CAD", "YYZ", "Toronto Pearson International Airport", "en"),
    City("Mexico City", "Mexico", "MX", 19.43, -99.13, -6,
         "America/Mexico_City", "MXN", "MEX", "Mexico City International Airport", "es"),
    City("Sao Paulo", "Brazil", "BR", -23.55, -46.63, -3,
         "America/Sao_Paulo", "BRL", "GRU", "São Paulo/Guarulhos International Airport", "pt"),
)  # fmt: skip


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres on a 6371 km sphere."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(a))

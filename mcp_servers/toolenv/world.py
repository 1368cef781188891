"""The seeded world behind the built-in tools: one seed, one consistent state of everything.

Every quantity is a pure function of ``(seed, entity key)`` drawn from a string-seeded
:class:`random.Random`, so the same seed gives the same world in every process, the same city has
the same weather whichever tool asks, and two seeds differ. Collections (flights, hotels,
contacts…) are built lazily on first use and cached on the instance.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import cached_property

from paraagent_runtime.checker import normalize_name

from .errors import ToolEnvNotFoundError
from .geo import CITIES, City, haversine_km
from .world_data import (
    _AIRCRAFT,
    _AIRLINES,
    _AMENITIES,
    _COMPANIES,
    _CUISINES,
    _CURRENCIES,
    _EMAIL_SUBJECTS,
    _EVENT_TITLES,
    _FIRST,
    _GENRES,
    _HOTEL_PREFIX,
    _HOTEL_SUFFIX,
    _LAST,
    _MASCOTS_BASKET,
    _MASCOTS_FOOTBALL,
    _MOVIE_ADJ,
    _MOVIE_NOUN,
    _NEWS_SOURCES,
    _PLACE_KINDS,
    _PLACE_WORDS,
    _RECIPES,
    _STOCKS,
    _STREETS,
    CONDITIONS,
)

__all__ = [
    "Article",
    "Contact",
    "Email",
    "Event",
    "Flight",
    "Hotel",
    "League",
    "Match",
    "Movie",
    "Recipe",
    "Stock",
    "WeatherDay",
    "World",
]


@dataclass(frozen=True)
class WeatherDay:
    """One day of weather in one city (temperatures in °C)."""

    date: str
    high_c: float
    low_c: float
    condition: str
    precipitation_chance: int
    humidity: int
    wind_kph: float
    uv_index: int


@dataclass(frozen=True)
class Flight:
    """A daily scheduled flight; times are local to the departure/arrival airport."""

    number: str
    airline: str
    origin: City
    destination: City
    departure_time: str
    arrival_time: str
    arrival_day_offset: int
    duration_minutes: int
    distance_km: int
    aircraft: str
    terminal: str
    gate: str
    fares_usd: dict[str, float]


@dataclass(frozen=True)
class Hotel:
    """A hotel with a nightly base rate in USD."""

    hotel_id: str
    name: str
    city: City
    stars: int
    rating: float
    price_per_night_usd: float
    address: str
    distance_to_center_km: float
    amenities: tuple[str, ...]


@dataclass(frozen=True)
class Stock:
    """A listed company with its latest quote in its trading currency."""

    symbol: str
    name: str
    exchange: str
    currency: str
    sector: str
    price: float
    previous_close: float
    market_cap_billion: float
    pe_ratio: float
    employees: int
    headquarters: str


@dataclass(frozen=True)
class Contact:
    """A person in the user's address book."""

    contact_id: str
    name: str
    email: str
    phone: str
    company: str
    city: str


@dataclass(frozen=True)
class Event:
    """A calendar event in the user's local time."""

    event_id: str
    title: str
    start: str
    end: str
    location: str
    attendees: tuple[str, ...]


@dataclass(frozen=True)
class Email:
    """A message in the user's mailbox."""

    message_id: str
    sender: str
    sender_name: str
    subject: str
    body: str
    received_at: str
    unread: bool
    folder: str


@dataclass(frozen=True)
class Article:
    """A news article."""

    article_id: str
    title: str
    category: str
    source: str
    published_at: str
    summary: str
    country: str


@dataclass(frozen=True)
class Match:
    """A league fixture; scores are ``None`` until it is played."""

    match_id: str
    league: str
    date: str
    home: str
    away: str
    venue_city: str
    home_score: int | None = None
    away_score: int | None = None


@dataclass(frozen=True)
class League:
    """A sports league with its teams and fixtures."""

    name: str
    sport: str
    teams: tuple[str, ...]
    team_cities: dict[str, str]
    matches: tuple[Match, ...] = field(default=())


@dataclass(frozen=True)
class Recipe:
    """A recipe with per-serving nutrition."""

    recipe_id: str
    name: str
    cuisine: str
    diets: tuple[str, ...]
    minutes: int
    servings: int
    ingredients: tuple[str, ...]
    steps: tuple[str, ...]
    calories: int
    protein_g: float
    carbs_g: float
    fat_g: float


@dataclass(frozen=True)
class Movie:
    """A film in the catalog."""

    movie_id: str
    title: str
    genre: str
    year: int
    runtime_minutes: int
    rating: float
    director: str
    cast: tuple[str, ...]
    synopsis: str


def _round(value: float, digits: int = 1) -> float:
    return round(value + 0.0, digits)


class World:
    """All entities of one seeded world.

    Args:
        seed: The world seed; equal seeds give identical worlds.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        clock = self.rng("clock")
        self.today: date = date(2025, 1, 6) + timedelta(days=clock.randrange(0, 300))
        self.now_utc: datetime = datetime(
            self.today.year, self.today.month, self.today.day, clock.randrange(7, 20), 0
        )
        self._built_flights: dict[str, Flight] = {}
        self._cities = {city.key: city for city in CITIES}
        for city in CITIES:
            self._cities.setdefault(normalize_name(city.airport), city)

    def rng(self, *parts: object) -> random.Random:
        """A private random stream for one entity: same seed and parts, same numbers."""
        return random.Random("toolenv:" + str(self.seed) + ":" + ":".join(str(p) for p in parts))

    # geography ---------------------------------------------------------------------------------
    def city(self, name: str) -> City:
        """Resolve a city by name (``"Paris"``, ``"paris, france"``) or airport code."""
        key = normalize_name(name)
        city = self._cities.get(key) or self._cities.get(normalize_name(name.split(",")[0]))
        if city is None:
            raise ToolEnvNotFoundError(
                f"unknown city {name!r}; known cities include "
                f"{', '.join(c.name for c in CITIES[:6])}"
            )
        return city

    def local_now(self, city: City) -> datetime:
        """The current local wall-clock time in ``city``."""
        return self.now_utc + timedelta(hours=city.utc_offset)

    # weather -------------------------------------------------------------------------------------
    def weather_day(self, city: City, offset: int) -> WeatherDay:
        """The weather in ``city`` ``offset`` days after today (0 = today)."""
        day = self.today + timedelta(days=offset)
        rng = self.rng("weather", city.key, day.isoformat())
        season = math.cos(2 * math.pi * (day.timetuple().tm_yday - 200) / 365)
        hemisphere = 1 if city.lat >= 0 else -1
        mean = (
            29
            - 0.42 * max(0.0, abs(city.lat) - 12)
            + hemisphere * season * min(12.0, 0.22 * abs(city.lat))
        )
        high = mean + 4 + rng.gauss(0, 2.5)
        low = high - rng.uniform(5, 11)
        weights = [4, 4, 3, 2, 2, 1, 1, 2 if low < 1 else 0]
        condition = rng.choices(CONDITIONS, weights=weights)[0]
        rainy = condition in ("light rain", "rain", "thunderstorm", "snow")
        return WeatherDay(
            date=day.isoformat(),
            high_c=_round(high),
            low_c=_round(low),
            condition=condition,
            precipitation_chance=rng.randint(55, 95) if rainy else rng.randint(0, 30),
            humidity=rng.randint(70, 98) if rainy else rng.randint(25, 75),
            wind_kph=_round(rng.uniform(3, 45)),
            uv_index=max(0, min(11, round((high - 5) / 3) - (3 if rainy else 0))),
        )

    def hourly_temp_c(self, city: City, offset: int, hour: int) -> float:
        """Temperature at a local hour: lowest at 05:00, highest at 15:00."""
        day = self.weather_day(city, offset)
        phase = math.cos(2 * math.pi * (hour - 15) / 24)
        return _round(day.low_c + (day.high_c - day.low_c) * (phase + 1) / 2)

    def current_weather(self, city: City) -> dict[str, float | int | str]:
        """Current conditions in ``city``; the source of truth for every weather-like tool."""
        day = self.weather_day(city, 0)
        local = self.local_now(city)
        hour_offset = (local.date() - self.today).days
        temp = self.hourly_temp_c(city, hour_offset, local.hour)
        wind_chill = 0.6 * (day.wind_kph / 10) if temp < 15 else -0.03 * day.humidity
        return {
            "temperature_c": temp,
            "feels_like_c": _round(temp - wind_chill),
            "condition": day.condition,
            "humidity": day.humidity,
            "wind_kph": day.wind_kph,
            "observed_at": local.strftime("%Y-%m-%dT%H:%M"),
        }

    # money -------------------------------------------------------------------------------------
    @cached_property
    def usd_rates(self) -> dict[str, float]:
        """Units of each currency per US dollar."""
        rng = self.rng("fx")
        return {
            code: round(base * (1 + rng.uniform(-0.03, 0.03)), 6) if code != "USD" else 1.0
            for code, (_, base) in _CURRENCIES.items()
        }

    def currency_name(self, code: str) -> str:
        """The English name of a currency code."""
        return _CURRENCIES[self.currency_code(code)][0]

    def currency_code(self, code: str) -> str:
        """Validate a currency code against the world's currencies."""
        upper = code.strip().upper()
        if upper not in _CURRENCIES:
            raise ToolEnvNotFoundError(
                f"unsupported currency {code!r}; supported: {', '.join(_CURRENCIES)}"
            )
        return upper

    def exchange_rate(self, base: str, quote: str) -> float:
        """Units of ``quote`` per one unit of ``base``."""
        rates = self.usd_rates
        return round(rates[self.currency_code(quote)] / rates[self.currency_code(base)], 6)

    def convert(self, amount: float, base: str, quote: str) -> float:
        """``amount`` of ``base`` expressed in ``quote``, rounded to cents."""
        return round(amount * self.exchange_rate(base, quote), 2)

    @cached_property
    def stocks(self) -> dict[str, Stock]:
        """Listed companies by symbol."""
        out = {}
        for symbol, name, exchange, currency, sector, base in _STOCKS:
            rng = self.rng("stock", symbol)
            price = round(base * math.exp(rng.gauss(0, 0.08)), 2)
            previous = round(price / (1 + rng.gauss(0, 0.015)), 2)
            out[symbol] = Stock(
                symbol=symbol,
                name=name,
                exchange=exchange,
                currency=currency,
                sector=sector,
                price=price,
                previous_close=previous,
                market_cap_billion=round(rng.uniform(20, 3000), 1),
                pe_ratio=round(rng.uniform(8, 60), 1),
                employees=rng.randrange(5_000, 400_000, 100),
                headquarters=rng.choice(CITIES).name,
            )
        return out

    def stock(self, symbol: str) -> Stock:
        """A stock by symbol (case-insensitive)."""
        try:
            return self.stocks[symbol.strip().upper()]
        except KeyError:
            raise ToolEnvNotFoundError(f"unknown ticker symbol {symbol!r}") from None

    def stock_history(self, symbol: str, days: int) -> list[dict[str, float | str]]:
        """Daily closes for the last ``days`` trading days, newest last, ending at the quote."""
        stock = self.stock(symbol)
        rng = self.rng("history", stock.symbol)
        closes = [stock.price]
        for _ in range(days - 1):
            closes.append(round(closes[-1] / (1 + rng.gauss(0, 0.015)), 2))
        closes.reverse()
        return [
            {"date": (self.today - timedelta(days=days - 1 - i)).isoformat(), "close": close}
            for i, close in enumerate(closes)
        ]

    # travel --------------------------------------------------------------------------------------
    @cached_property
    def _routes(self) -> dict[str, tuple[str, City, City]]:
        """Flight number → (airline, origin, destination); outbound even, return odd."""
        out: dict[str, tuple[str, City, City]] = {}
        for code, airline, hubs in _AIRLINES:
            rng = self.rng("routes", code)
            numbers = rng.sample(range(100, 999, 2), 12)
            for index, number in enumerate(numbers):
                hub = self.city(hubs[index % len(hubs)])
                dest = rng.choice([c for c in CITIES if c.name not in hubs])
                out[f"{code}{number}"] = (airline, hub, dest)
                out[f"{code}{number + 1}"] = (airline, dest, hub)
        return out

    @cached_property
    def flight_numbers(self) -> list[str]:
        """Every scheduled flight number, sorted (cheap: no flight is built)."""
        return sorted(self._routes)

    @cached_property
    def flights(self) -> dict[str, Flight]:
        """All scheduled flights by number (outbound even, return odd, as airlines do)."""
        return {number: self.flight(number) for number in self._routes}

    def _make_flight(self, number: str, airline: str, origin: City, dest: City) -> Flight:
        rng = self.rng("flight", number)
        distance = haversine_km(origin.lat, origin.lon, dest.lat, dest.lon)
        minutes = int(round((distance / 820 + 0.6) * 60 / 5) * 5)
        dep = datetime(2000, 1, 1, rng.randrange(6, 23), rng.randrange(0, 60, 5))
        arr = (
            dep + timedelta(minutes=minutes) + timedelta(hours=dest.utc_offset - origin.utc_offset)
        )
        base = 60 + distance * 0.09
        return Flight(
            number=number,
            airline=airline,
            origin=origin,
            destination=dest,
            departure_time=dep.strftime("%H:%M"),
            arrival_time=arr.strftime("%H:%M"),
            arrival_day_offset=(arr.date() - dep.date()).days,
            duration_minutes=minutes,
            distance_km=round(distance),
            aircraft=rng.choice(_AIRCRAFT),
            terminal=str(rng.randint(1, 3)),
            gate=f"{rng.choice('ABCDEFGH')}{rng.randint(1, 60)}",
            fares_usd={
                "economy": round(base * rng.uniform(0.8, 1.3), 2),
                "premium_economy": round(base * rng.uniform(1.6, 2.2), 2),
                "business": round(base * rng.uniform(3.5, 5.0), 2),
            },
        )

    def flight(self, number: str) -> Flight:
        """A flight by number (``"lh 400"`` and ``"LH400"`` both work), built on first use."""
        key = "".join(number.split()).upper()
        if key not in self._built_flights:
            try:
                airline, origin, destination = self._routes[key]
            except KeyError:
                raise ToolEnvNotFoundError(f"no scheduled flight {number!r}") from None
            self._built_flights[key] = self._make_flight(key, airline, origin, destination)
        return self._built_flights[key]

    def flight_status(self, flight: Flight, day: date) -> dict[str, int | str]:
        """Operational status of ``flight`` on ``day``."""
        rng = self.rng("status", flight.number, day.isoformat())
        roll = rng.random()
        if roll < 0.04:
            return {"status": "cancelled", "delay_minutes": 0}
        if roll < 0.3:
            return {"status": "delayed", "delay_minutes": rng.randrange(15, 180, 5)}
        return {"status": "on time", "delay_minutes": 0}

    @cached_property
    def hotels(self) -> dict[str, Hotel]:
        """Hotels by id, five per city."""
        out: dict[str, Hotel] = {}
        for city in CITIES:
            rng = self.rng("hotels", city.key)
            cost = 0.6 + 0.8 * rng.random()
            for index, (prefix, suffix) in enumerate(
                zip(rng.sample(_HOTEL_PREFIX, 5), rng.choices(_HOTEL_SUFFIX, k=5), strict=True)
            ):
                stars = rng.randint(2, 5)
                hotel_id = f"{city.airport}-H{index + 1}"
                out[hotel_id] = Hotel(
                    hotel_id=hotel_id,
                    name=f"{prefix} {city.name} {suffix}",
                    city=city,
                    stars=stars,
                    rating=round(rng.uniform(6.2, 9.7), 1),
                    price_per_night_usd=round(
                        (45 + 38 * stars * stars / 2) * cost * rng.uniform(0.8, 1.25), 2
                    ),
                    address=f"{rng.randint(1, 180)} {rng.choice(_STREETS)}, {city.name}",
                    distance_to_center_km=round(rng.uniform(0.2, 9.0), 1),
                    amenities=tuple(sorted(rng.sample(_AMENITIES, rng.randint(3, 7)))),
                )
        return out

    def hotel(self, hotel_id: str) -> Hotel:
        """A hotel by id."""
        try:
            return self.hotels[hotel_id.strip().upper()]
        except KeyError:
            raise ToolEnvNotFoundError(f"no hotel with id {hotel_id!r}") from None

    def hotels_in(self, city: City) -> list[Hotel]:
        """The hotels of ``city``, in id order."""
        return [hotel for hotel in self.hotels.values() if hotel.city == city]

    # people --------------------------------------------------------------------------------------
    @cached_property
    def user(self) -> Contact:
        """The account owner of the mailbox and calendar."""
        rng = self.rng("user")
        return Contact(
            "me",
            "Alex Morgan",
            "alex.morgan@example.com",
            "+1-555-0100",
            "example",
            rng.choice(CITIES).name,
        )

    @cached_property
    def contacts(self) -> list[Contact]:
        """The user's address book (distinct names)."""
        rng = self.rng("contacts")
        firsts, lasts = rng.sample(_FIRST, 12), rng.sample(_LAST, 12)
        out = []
        for index, (first, last) in enumerate(zip(firsts, lasts, strict=True)):
            company = rng.choice(_COMPANIES)
            out.append(
                Contact(
                    contact_id=f"c{index + 1:03d}",
                    name=f"{first} {last}",
                    email=f"{first.lower()}.{last.lower()}@{company}.com",
                    phone=f"+1-555-{rng.randint(1000, 9999)}",
                    company=company.title(),
                    city=rng.choice(CITIES).name,
                )
            )
        return out

    @cached_property
    def events(self) -> list[Event]:
        """The user's calendar for the next two weeks, sorted by start."""
        rng = self.rng("calendar")
        out = []
        for index in range(14):
            start = datetime(
                self.today.year,
                self.today.month,
                self.today.day,
                rng.randrange(8, 18),
                rng.choice((0, 30)),
            )
            start += timedelta(days=rng.randrange(0, 14))
            person = rng.choice(self.contacts)
            out.append(
                Event(
                    event_id=f"evt_{index + 1:04d}",
                    title=rng.choice(_EVENT_TITLES).format(p=person.name.split()[0]),
                    start=start.strftime("%Y-%m-%dT%H:%M"),
                    end=(start + timedelta(minutes=rng.choice((30, 45, 60, 90)))).strftime(
                        "%Y-%m-%dT%H:%M"
                    ),
                    location=rng.choice(
                        ("Room 4.12", "Video call", "Cafe Central", "Head office", "Online")
                    ),
                    attendees=(person.email,),
                )
            )
        return sorted(out, key=lambda event: event.start)

    @cached_property
    def emails(self) -> list[Email]:
        """The user's mailbox, newest first."""
        rng = self.rng("mail")
        out = []
        for index in range(16):
            person = rng.choice(self.contacts)
            received = self.now_utc - timedelta(minutes=rng.randrange(10, 60 * 24 * 10))
            subject = rng.choice(_EMAIL_SUBJECTS).format(
                n=rng.randint(1000, 9999),
                month=received.strftime("%B"),
                city=rng.choice(CITIES).name,
            )
            out.append(
                Email(
                    message_id=f"msg_{index + 1:04d}",
                    sender=person.email,
                    sender_name=person.name,
                    subject=subject,
                    body=(
                        f"Hi Alex,\n\n{subject}. Let me know what you think.\n\n"
                        f"Best,\n{person.name.split()[0]}"
                    ),
                    received_at=received.strftime("%Y-%m-%dT%H:%M"),
                    unread=rng.random() < 0.4,
                    folder=rng.choice(("inbox", "inbox", "inbox", "archive")),
                )
            )
        return sorted(out, key=lambda mail: mail.received_at, reverse=True)

    # media ---------------------------------------------------------------------------------------
    @cached_property
    def articles(self) -> list[Article]:
        """Recent news articles across categories, newest first."""
        rng = self.rng("news")
        stocks = list(self.stocks.values())
        leagues = list(self.leagues.values())
        out = []
        for index in range(36):
            category = ("business", "technology", "sports", "travel", "science", "world")[index % 6]
            city = rng.choice(CITIES)
            stock = rng.choice(stocks)
            if category == "business":
                move = (stock.price / stock.previous_close - 1) * 100
                title = (
                    f"{stock.name} shares {'rise' if move >= 0 else 'fall'} "
                    f"{abs(move):.1f}% on {stock.exchange}"
                )
            elif category == "technology":
                title = (
                    f"{stock.name} unveils a new "
                    f"{rng.choice(('AI assistant', 'chip', 'cloud region', 'headset'))} in "
                    f"{city.name}"
                )
            elif category == "sports":
                league = rng.choice(leagues)
                title = f"{rng.choice(league.teams)} look ahead to a busy {league.name} month"
            elif category == "travel":
                airline = rng.choice(_AIRLINES)[1]
                title = f"{airline} adds extra flights to {city.name} for the season"
            elif category == "science":
                title = (
                    f"Researchers in {city.name} report progress on "
                    f"{rng.choice(('battery recycling', 'coral restoration', 'fusion materials', 'malaria vaccines'))}"  # noqa: E501
                )
            else:
                title = (
                    f"{city.name} hosts international summit on "
                    f"{rng.choice(('water security', 'urban transport', 'trade', 'climate adaptation'))}"  # noqa: E501
                )
            published = self.now_utc - timedelta(minutes=rng.randrange(5, 60 * 72))
            out.append(
                Article(
                    article_id=f"art_{index + 1:04d}",
                    title=title,
                    category=category,
                    source=rng.choice(_NEWS_SOURCES),
                    published_at=published.strftime("%Y-%m-%dT%H:%M"),
                    summary=(
                        f"{title}. Our correspondents summarise what happened and what comes next."
                    ),
                    country=city.country_code,
                )
            )
        return sorted(out, key=lambda article: article.published_at, reverse=True)

    @cached_property
    def leagues(self) -> dict[str, League]:
        """Two leagues with a double round-robin; five rounds are already played."""
        rng = self.rng("leagues")
        specs = (
            ("Continental Football League", "football", _MASCOTS_FOOTBALL, 10),
            ("Pacific Basketball League", "basketball", _MASCOTS_BASKET, 8),
        )
        out = {}
        for name, sport, mascots, size in specs:
            cities = rng.sample(CITIES, size)
            teams = tuple(
                f"{city.name} {mascot}"
                for city, mascot in zip(cities, rng.sample(mascots, size), strict=True)
            )
            team_cities = {team: city.name for team, city in zip(teams, cities, strict=True)}
            out[name] = League(
                name, sport, teams, team_cities, self._fixtures(name, sport, teams, team_cities)
            )
        return out

    def _fixtures(
        self, league: str, sport: str, teams: tuple[str, ...], cities: dict[str, str]
    ) -> tuple[Match, ...]:
        rng = self.rng("fixtures", league)
        order = list(teams)
        matches = []
        for round_index in range(len(order) - 1):
            day = self.today + timedelta(
                days=7 * (round_index - 5) + (3 if round_index >= 5 else -2)
            )
            for k in range(len(order) // 2):
                home, away = order[k], order[-1 - k]
                if round_index % 2:
                    home, away = away, home
                scores: tuple[int | None, int | None] = (None, None)
                if round_index < 5:
                    scores = (
                        (rng.choice((0, 0, 1, 1, 1, 2, 2, 3, 4)), rng.choice((0, 0, 1, 1, 2, 2, 3)))
                        if sport == "football"
                        else (rng.randint(85, 125), rng.randint(82, 121))
                    )
                    if sport == "basketball" and scores[0] == scores[1]:
                        scores = (scores[0] + 3, scores[1])
                matches.append(
                    Match(
                        f"{''.join(w[0] for w in league.split())}-{round_index + 1:02d}-{k + 1}",
                        league,
                        day.isoformat(),
                        home,
                        away,
                        cities[home],
                        *scores,
                    )
                )
            order.insert(1, order.pop())
        return tuple(matches)

    def team(self, name: str) -> tuple[League, str]:
        """The league and canonical name of a team.

        Matched on normalized name, or a unique word.
        """
        key = normalize_name(name)
        candidates = []
        for league in self.leagues.values():
            for team in league.teams:
                if normalize_name(team) == key:
                    return league, team
                if key and key in normalize_name(team):
                    candidates.append((league, team))
        if len(candidates) == 1:
            return candidates[0]
        raise ToolEnvNotFoundError(f"no unique team matches {name!r}")

    def league(self, name: str) -> League:
        """A league by (normalized, possibly partial) name."""
        key = normalize_name(name)
        for league in self.leagues.values():
            if key and key in normalize_name(league.name):
                return league
        raise ToolEnvNotFoundError(f"unknown league {name!r}; leagues: {', '.join(self.leagues)}")

    @cached_property
    def recipes(self) -> dict[str, Recipe]:
        """Recipes by id with seeded nutrition per serving."""
        out = {}
        for index, (name, cuisine, diets, minutes, servings, ingredients, steps) in enumerate(
            _RECIPES
        ):
            rng = self.rng("recipe", name)
            recipe_id = f"rcp_{index + 1:03d}"
            out[recipe_id] = Recipe(
                recipe_id,
                name,
                cuisine,
                diets,
                minutes,
                servings,
                ingredients,
                steps,
                calories=rng.randrange(220, 820, 5),
                protein_g=round(rng.uniform(5, 45), 1),
                carbs_g=round(rng.uniform(8, 90), 1),
                fat_g=round(rng.uniform(4, 40), 1),
            )
        return out

    def recipe(self, recipe_id: str) -> Recipe:
        """A recipe by id."""
        try:
            return self.recipes[recipe_id.strip().lower()]
        except KeyError:
            raise ToolEnvNotFoundError(f"no recipe with id {recipe_id!r}") from None

    @cached_property
    def movies(self) -> dict[str, Movie]:
        """Films by id."""
        rng = self.rng("movies")
        titles = [
            f"The {adj} {noun}"
            for adj, noun in zip(
                rng.sample(_MOVIE_ADJ, 10), rng.sample(_MOVIE_NOUN, 10), strict=True
            )
        ]
        out = {}
        for index, title in enumerate(titles):
            movie_id = f"mv_{index + 1:03d}"
            genre = rng.choice(_GENRES)
            out[movie_id] = Movie(
                movie_id,
                title,
                genre,
                rng.randint(1998, self.today.year),
                rng.randint(84, 172),
                round(rng.uniform(5.1, 8.9), 1),
                f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
                tuple(f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" for _ in range(3)),
                (
                    f"A {genre} about "
                    f"{rng.choice(('a lighthouse keeper', 'two rival chefs', 'a lost satellite', 'an unlikely heist crew', 'a family reunion'))}."  # noqa: E501
                ),
            )
        return out

    def movie(self, movie_id: str) -> Movie:
        """A film by id."""
        try:
            return self.movies[movie_id.strip().lower()]
        except KeyError:
            raise ToolEnvNotFoundError(f"no movie with id {movie_id!r}") from None

    def showtimes(self, movie: Movie, city: City, day: date) -> list[dict[str, float | str]]:
        """Screenings of ``movie`` in ``city`` on ``day`` (prices in the city's currency)."""
        rng = self.rng("showtimes", movie.movie_id, city.key, day.isoformat())
        price_usd = rng.uniform(9, 18)
        out = []
        for cinema in (f"Cineplex {city.name} Central", f"{city.name} Arthouse"):
            for hour in sorted(rng.sample(range(12, 23), rng.randint(1, 3))):
                out.append(
                    {
                        "showtime_id": (
                            f"st_{movie.movie_id[3:]}_{city.airport.lower()}_{day:%m%d}_{hour}"
                        ),
                        "cinema": cinema,
                        "start": (
                            f"{day.isoformat()}T{hour:02d}:{rng.choice(('00', '15', '30', '45'))}"
                        ),
                        "price": self.convert(price_usd, "USD", city.currency),
                        "currency": city.currency,
                    }
                )
        return out

    def places(self, city: City, kind: str) -> list[dict[str, float | str | bool]]:
        """Points of interest of one kind around the centre of ``city``."""
        rng = self.rng("places", city.key, kind)
        out = []
        for index, word in enumerate(rng.sample(_PLACE_WORDS, 4)):
            out.append(
                {
                    "place_id": f"pl_{city.airport.lower()}_{kind[:3]}_{index + 1}",
                    "name": f"{word} {kind.title()}",
                    "category": kind,
                    "rating": round(rng.uniform(3.2, 4.9), 1),
                    "address": f"{rng.randint(1, 200)} {rng.choice(_STREETS)}, {city.name}",
                    "lat": round(city.lat + rng.uniform(-0.03, 0.03), 5),
                    "lon": round(city.lon + rng.uniform(-0.03, 0.03), 5),
                    "open_now": rng.random() < 0.75,
                }
            )
        return out

    @staticmethod
    def place_kinds() -> tuple[str, ...]:
        """The categories :meth:`places` knows."""
        return _PLACE_KINDS

    @staticmethod
    def cuisines() -> tuple[str, ...]:
        """The cuisines recipe search filters on."""
        return _CUISINES

    @staticmethod
    def currencies() -> tuple[str, ...]:
        """The supported currency codes."""
        return tuple(_CURRENCIES)

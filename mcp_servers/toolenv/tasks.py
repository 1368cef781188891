"""Verifiable tasks over the built-in catalog: the task families and their generator.

A task (:class:`paraagent_runtime.tasks.Task`) is a query, a gold call DAG, and the facts an
answer needs.

Each task family picks entities from a seeded world, then *runs* its gold DAG against a simulator
of that world: a node's arguments may be bound to fields of earlier outputs (``bindings``), and
answer facts are read from the outputs (``AnswerFact.source``). Nothing is hard-coded, so the same
task replayed in ``ToolEnv.for_task(task)`` reproduces every value. Groups follow
StableToolBench: G1 = one tool, G2 = several tools of one category, G3 = several categories.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from datetime import date, timedelta
from typing import Any

from paraagent_runtime import AnswerFact, ConfigError, GoldCall, Task, resolve_binding, resolve_path
from paraagent_runtime.tasks import Group

from .builtin import builtin_records
from .geo import CITIES
from .simulator import ToolEnvSimulator

__all__ = [
    "ALL_FAMILIES",
    "FAMILIES",
    "HELD_OUT_CATEGORIES",
    "HELD_OUT_TOOLS",
    "UNSEEN_CATEGORY_FAMILIES",
    "UNSEEN_TOOL_FAMILIES",
    "builtin_tasks",
    "check_families",
    "execute_gold",
    "generate_tasks",
    "split_families",
]


def execute_gold(task: Task, simulator: ToolEnvSimulator) -> dict[str, Any]:
    """Run the task's gold DAG on ``simulator`` level by level, resolving bindings from outputs.

    Returns:
        Outputs by node id.

    Raises:
        ValueError: A bound argument resolves to a value other than the one recorded in the task.
    """
    outputs: dict[str, Any] = {}
    calls = {call.id: call for call in task.calls}
    for level in task.levels():
        for node in level:
            call = calls[node]
            arguments = dict(call.arguments)
            for name, reference in call.bindings.items():
                arguments[name] = resolve_binding(outputs, reference)
            if arguments != call.arguments:
                raise ValueError(
                    f"{task.id}/{node}: bound arguments {arguments} differ from recorded "
                    f"{call.arguments}"
                )
            outputs[node] = simulator.respond(call.tool, arguments)
    return outputs


class _Trace:
    """Builds a gold DAG by executing it: each call is answered at once so later calls can bind."""

    def __init__(self, simulator: ToolEnvSimulator) -> None:
        self.simulator = simulator
        self.world = simulator.world
        self.calls: list[GoldCall] = []
        self.outputs: dict[str, Any] = {}
        self.facts: list[AnswerFact] = []

    def call(self, tool: str, arguments: dict[str, Any], bind: dict[str, str] | None = None) -> str:
        node = f"n{len(self.calls) + 1}"
        bind = bind or {}
        full = {
            **arguments,
            **{name: resolve_binding(self.outputs, ref) for name, ref in bind.items()},
        }
        self.outputs[node] = self.simulator.respond(tool, full)
        depends = sorted(
            {ref.strip("[").split(".", 1)[0] for ref in bind.values()}, key=lambda n: int(n[1:])
        )
        self.calls.append(
            GoldCall(id=node, tool=tool, arguments=full, depends_on=depends, bindings=bind)
        )
        return node

    def get(self, reference: str) -> Any:
        return resolve_path(self.outputs, reference)

    def fact(self, reference: str, label: str, *, tolerance: float | None = None) -> Any:
        value = self.get(reference)
        self.facts.append(
            AnswerFact(value=value, label=label, source=reference, tolerance=tolerance)
        )
        return value

    def group(self) -> Group:
        tools = {call.tool for call in self.calls}
        if len(tools) == 1:
            return "G1"
        categories = {self.simulator.record(tool).category for tool in tools}
        return "G2" if len(categories) == 1 else "G3"


Family = Callable[[_Trace, random.Random], tuple[str, str]]
"""Builds one task in a trace; returns ``(query, gold answer text)``."""


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _pick(rng: random.Random, options: Sequence[str]) -> str:
    return options[rng.randrange(len(options))]


def _multi_city_weather(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    cities = [c.name for c in rng.sample(CITIES, rng.randint(2, 4))]
    lines = []
    for city in cities:
        node = trace.call("weather/get_current_weather", {"city": city})
        temp = trace.fact(f"{node}.temperature", f"temperature in {city}", tolerance=0.15)
        condition = trace.fact(f"{node}.condition", f"sky in {city}")
        lines.append(f"{city}: {temp}°C, {condition}")
    query = _pick(
        rng,
        (
            "What's the weather like right now in {c}?",
            "Compare the current temperatures in {c}.",
            "I need the current conditions for {c} — temperature and sky, please.",
        ),
    )
    return query.format(c=_and(cities)), "Right now — " + "; ".join(lines) + "."


def _flight_arrival_weather(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    number = rng.choice(sorted(trace.world.flights))
    n1 = trace.call("aviation/get_flight", {"flight_number": number})
    n2 = trace.call("weather/get_current_weather", {}, bind={"city": f"{n1}.destination.city"})
    city = trace.fact(f"{n1}.destination.city", "arrival city")
    temp = trace.fact(f"{n2}.temperature", "temperature at arrival city", tolerance=0.15)
    query = _pick(
        rng,
        (
            "I'm on flight {n}. What's the weather like right now where I land?",
            "Where does {n} arrive, and how warm is it there at the moment?",
        ),
    )
    return query.format(
        n=number
    ), f"Flight {number} arrives in {city}, where it is currently {temp}°C."


def _stock_in_currency(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    stock = rng.choice(sorted(trace.world.stocks.values(), key=lambda s: s.symbol))
    target = rng.choice(
        [c for c in ("USD", "EUR", "GBP", "JPY", "CHF", "CAD") if c != stock.currency]
    )
    n1 = trace.call("finance/get_stock_quote", {"symbol": stock.symbol})
    n2 = trace.call(
        "currency/convert_currency",
        {"to_currency": target},
        bind={"amount": f"{n1}.price", "from_currency": f"{n1}.currency"},
    )
    price = trace.get(f"{n1}.price")
    amount = trace.fact(
        f"{n2}.converted_amount", f"price of {stock.symbol} in {target}", tolerance=0.02
    )
    query = _pick(
        rng,
        (
            "What is one share of {name} ({sym}) worth in {cur} right now?",
            "Convert the current {sym} share price to {cur}.",
        ),
    )
    answer = f"{stock.symbol} trades at {price} {stock.currency}, which is {amount} {target}."
    return query.format(name=stock.name, sym=stock.symbol, cur=target), answer


def _hotel_compare(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    check_in = (trace.world.today + timedelta(days=rng.randint(3, 30))).isoformat()
    nights = rng.randint(1, 4)
    cities = [c.name for c in rng.sample(CITIES, rng.randint(2, 3))]
    lines = []
    for city in cities:
        node = trace.call(
            "hotels/search_hotels",
            {"city": city, "check_in": check_in, "nights": nights, "sort_by": "price"},
        )
        name = trace.fact(f"{node}.hotels.0.name", f"cheapest hotel in {city}")
        total = trace.fact(
            f"{node}.hotels.0.total_price_usd", f"its total in {city}", tolerance=0.02
        )
        lines.append(f"{city}: {name} at {total} USD")
    query = (
        "Find the cheapest hotel in each of {c} for {n} night(s) from {d}, with the total price."
    )
    return query.format(c=_and(cities), n=nights, d=check_in), "Cheapest options — " + "; ".join(
        lines
    ) + "."


def _trip_briefing(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    flight = trace.world.flights[rng.choice(sorted(trace.world.flights))]
    target = flight.destination.currency if flight.destination.currency != "USD" else "EUR"
    check_in = (trace.world.today + timedelta(days=1)).isoformat()
    n1 = trace.call("aviation/get_flight", {"flight_number": flight.number})
    dest = f"{n1}.destination.city"
    n2 = trace.call("weather/get_current_weather", {}, bind={"city": dest})
    n3 = trace.call(
        "hotels/search_hotels",
        {"check_in": check_in, "nights": 2, "sort_by": "price"},
        bind={"city": dest},
    )
    n4 = trace.call("time/get_current_time", {}, bind={"city": dest})
    n5 = trace.call(
        "currency/convert_currency",
        {"from_currency": "USD", "to_currency": target},
        bind={"amount": f"{n3}.hotels.0.total_price_usd"},
    )
    city = trace.fact(dest, "destination")
    temp = trace.fact(f"{n2}.temperature", "temperature there", tolerance=0.15)
    local = str(trace.get(f"{n4}.local_time"))[-5:]
    trace.facts.append(AnswerFact(value=local, label="local time", source=f"{n4}.local_time"))
    hotel = trace.fact(f"{n3}.hotels.0.name", "cheapest hotel")
    total = trace.fact(f"{n5}.converted_amount", f"two nights in {target}", tolerance=0.05)
    query = (
        f"I'm taking {flight.number} tomorrow. Give me a briefing for my destination: "
        "current temperature, local time, and the cheapest hotel for 2 nights from "
        f"{check_in} with its total in {target}."
    )
    answer = (
        f"{flight.number} lands in {city}: {temp}°C now, local time {local}. Cheapest hotel: "
        f"{hotel}, {total} {target} for 2 nights."
    )
    return query, answer


def _match_venue_forecast(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    league = rng.choice(sorted(trace.world.leagues))
    team = rng.choice(trace.world.leagues[league].teams)
    n1 = trace.call("sports/get_next_match", {"team": team})
    match_day = date.fromisoformat(trace.get(f"{n1}.match.date"))
    index = (match_day - trace.world.today).days
    n2 = trace.call("weather/get_forecast", {"days": 7}, bind={"city": f"{n1}.match.venue_city"})
    venue = trace.fact(f"{n1}.match.venue_city", "venue city")
    when = trace.fact(f"{n1}.match.date", "match date")
    high = trace.fact(f"{n2}.days.{index}.high", "forecast high on match day", tolerance=0.15)
    query = _pick(
        rng,
        (
            "When and where do the {t} play next, and what's the forecast high there that day?",
            (
                "Will it be warm for the {t}' next game? Tell me the date, the city and the "
                "expected high."
            ),
        ),
    )
    return query.format(
        t=team
    ), f"The {team} play next on {when} in {venue}; the forecast high is {high}°C."


def _email_contact(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    contact = rng.choice(trace.world.contacts)
    topic = _pick(
        rng,
        ("the quarterly report", "next week's offsite", "the budget draft", "our lunch on Friday"),
    )
    n1 = trace.call("email/find_contact", {"name": contact.name})
    subject = f"About {topic}"
    trace.call(
        "email/send_email",
        {"subject": subject, "body": f"Hi {contact.name.split()[0]}, quick note about {topic}."},
        bind={"to": f"[{n1}.contacts.0.email]"},
    )
    address = trace.fact(f"{n1}.contacts.0.email", "contact's e-mail address")
    return (
        f"Email {contact.name} a short note about {topic} and tell me which address you used.",
        f"I sent the note to {contact.name} at {address}.",
    )


def _city_pair_facts(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    a, b = (c.name for c in rng.sample(CITIES, 2))
    n1 = trace.call("maps/get_distance", {"origin": a, "destination": b})
    n2 = trace.call("time/get_time_difference", {"city": a, "other_city": b})
    km = trace.fact(f"{n1}.distance_km", "distance in km", tolerance=1.0)
    hours = trace.fact(f"{n2}.hours_ahead", "hours ahead", tolerance=0.01)
    return (
        f"How far apart are {a} and {b} as the crow flies, and how many hours ahead of {b} is {a}?",
        f"{a} and {b} are {km} km apart; {a} is {hours} hours ahead of {b}.",
    )


def _stock_compare(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    symbols = rng.sample(sorted(trace.world.stocks), rng.randint(2, 3))
    parts = []
    for symbol in symbols:
        node = trace.call("finance/get_stock_quote", {"symbol": symbol})
        price = trace.fact(f"{node}.price", f"price of {symbol}", tolerance=0.01)
        parts.append(f"{symbol} {price} {trace.get(f'{node}.currency')}")
    return f"Give me the latest share prices of {_and(symbols)}.", "Latest prices: " + ", ".join(
        parts
    ) + "."


FAMILIES: dict[str, Family] = {
    "multi_city_weather": _multi_city_weather,
    "flight_arrival_weather": _flight_arrival_weather,
    "stock_in_currency": _stock_in_currency,
    "hotel_compare": _hotel_compare,
    "trip_briefing": _trip_briefing,
    "match_venue_forecast": _match_venue_forecast,
    "email_contact": _email_contact,
    "city_pair_facts": _city_pair_facts,
    "stock_compare": _stock_compare,
}
"""The seen families: ``train`` and ``test-seen`` draw from these (and any other split label)."""


def _air_quality_compare(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    cities = [c.name for c in rng.sample(CITIES, rng.randint(2, 4))]
    parts = []
    for city in cities:
        node = trace.call("weather/get_air_quality", {"city": city})
        aqi = trace.fact(f"{node}.aqi", f"AQI in {city}", tolerance=0.5)
        parts.append(f"{city} AQI {aqi}")
    query = _pick(
        rng,
        (
            "How clean is the air right now in {c}? Give me the AQI of each.",
            "Compare the air quality index of {c}.",
        ),
    )
    return query.format(c=_and(cities)), "Air quality — " + ", ".join(parts) + "."


def _airport_sun_times(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    airports = [c.airport for c in rng.sample(CITIES, rng.randint(1, 2))]
    day = (trace.world.today + timedelta(days=rng.randint(0, 5))).isoformat()
    parts = []
    for code in airports:
        n1 = trace.call("aviation/get_airport", {"code": code})
        n2 = trace.call("weather/get_sun_times", {"date": day}, bind={"city": f"{n1}.city"})
        city = trace.fact(f"{n1}.city", f"city of {code}")
        sunset = trace.fact(f"{n2}.sunset", f"sunset at {code}")
        parts.append(f"{code} serves {city}, sunset {sunset}")
    query = (
        f"I land at {_and(airports)} on {day}. Which city is that, and when does the sun set "
        "there that day?"
    )
    return query, "; ".join(parts) + "."


def _company_fx(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    stock = rng.choice(sorted(trace.world.stocks.values(), key=lambda s: s.symbol))
    quote = rng.choice([c for c in ("USD", "EUR", "GBP", "JPY", "CHF") if c != stock.currency])
    n1 = trace.call("finance/get_company_profile", {"symbol": stock.symbol})
    n2 = trace.call("currency/get_exchange_rate", {"quote": quote}, bind={"base": f"{n1}.currency"})
    headquarters = trace.fact(f"{n1}.headquarters", f"headquarters of {stock.symbol}")
    rate = trace.fact(f"{n2}.rate", f"rate of its currency to {quote}", tolerance=0.01)
    query = (
        f"Where is {stock.symbol} headquartered, and what is the exchange rate from the currency "
        f"it reports in to {quote}?"
    )
    return (
        query,
        (
            f"{stock.symbol} is based in {headquarters}; 1 {trace.get(f'{n1}.currency')} = {rate} "
            f"{quote}."
        ),
    )


def _recipe_nutrition(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    diet = _pick(rng, ("vegetarian", "vegan", "gluten free"))
    servings = rng.randint(1, 4)
    n1 = trace.call("recipes/search_recipes", {"diet": diet})
    n2 = trace.call(
        "recipes/get_nutrition",
        {"servings": servings},
        bind={"recipe_id": f"{n1}.recipes.0.recipe_id"},
    )
    name = trace.fact(f"{n1}.recipes.0.name", "first recipe found")
    calories = trace.fact(f"{n2}.calories", f"calories for {servings} serving(s)", tolerance=1.0)
    query = (
        f"Find me a {diet} recipe and tell me how many calories {servings} serving(s) of the "
        "first one have."
    )
    return query, f"{name}: {calories} kcal for {servings} serving(s)."


def _translate_phrase(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    phrase = _pick(rng, ("good morning", "thank you", "good night", "see you tomorrow"))
    languages = rng.sample(("de", "fr", "es", "it", "pt"), rng.randint(2, 3))
    parts = []
    for language in languages:
        node = trace.call(
            "translation/translate_text", {"text": phrase, "target_language": language}
        )
        parts.append(
            f"{language}: {trace.fact(f'{node}.translation', f'{phrase!r} in {language}')}"
        )
    return f"How do I say {phrase!r} in {_and(languages)} (language codes)?", "; ".join(parts) + "."


def _movie_showtimes(trace: _Trace, rng: random.Random) -> tuple[str, str]:
    city = rng.choice(CITIES).name
    day = (trace.world.today + timedelta(days=rng.randint(0, 6))).isoformat()
    n1 = trace.call("movies/search_movies", {"query": "the"})
    n2 = trace.call(
        "movies/get_showtimes",
        {"city": city, "date": day},
        bind={"movie_id": f"{n1}.movies.0.movie_id"},
    )
    title = trace.fact(f"{n1}.movies.0.title", "first film found")
    cinema = trace.fact(f"{n2}.showtimes.0.cinema", "cinema of the first showtime")
    price = trace.fact(f"{n2}.showtimes.0.price", "ticket price", tolerance=0.01)
    query = (
        "Search films matching 'the', take the first hit and tell me where it shows first in "
        f"{city} on {day} and the ticket price."
    )
    return query, f"{title} shows first at {cinema}; a ticket costs {price}."


UNSEEN_TOOL_FAMILIES: dict[str, Family] = {
    "air_quality_compare": _air_quality_compare,
    "airport_sun_times": _airport_sun_times,
    "company_fx": _company_fx,
}
"""Families of ``test-unseen-tools``: seen categories, tools no seen family calls."""

UNSEEN_CATEGORY_FAMILIES: dict[str, Family] = {
    "recipe_nutrition": _recipe_nutrition,
    "translate_phrase": _translate_phrase,
    "movie_showtimes": _movie_showtimes,
}
"""Families of ``test-unseen-categories``: categories no seen family touches."""

ALL_FAMILIES: dict[str, Family] = {**FAMILIES, **UNSEEN_TOOL_FAMILIES, **UNSEEN_CATEGORY_FAMILIES}

HELD_OUT_TOOLS: frozenset[str] = frozenset(
    {
        "weather/get_air_quality",
        "weather/get_sun_times",
        "aviation/get_airport",
        "finance/get_company_profile",
        "currency/get_exchange_rate",
    }
)
"""Tools of seen categories that only ``test-unseen-tools`` tasks call."""

HELD_OUT_CATEGORIES: frozenset[str] = frozenset(
    {"Food", "Language", "Entertainment", "News", "Productivity"}
)
"""Categories only ``test-unseen-categories`` tasks touch (recipes, translation, movies, news, \
calendar)."""


def split_families(split: str) -> list[str]:
    """The family names a split draws from by default."""
    if split == "test-unseen-tools":
        return list(UNSEEN_TOOL_FAMILIES)
    if split == "test-unseen-categories":
        return list(UNSEEN_CATEGORY_FAMILIES)
    return list(FAMILIES)


def _build(
    family: str, index: int, *, seed: int, split: str, task_seed: int, rng: random.Random
) -> Task:
    trace = _Trace(ToolEnvSimulator(builtin_records(), seed=task_seed))
    query, answer = ALL_FAMILIES[family](trace, rng)
    return Task(
        id=f"{split}-{seed}-{index:05d}-{family}",
        query=query,
        group=trace.group(),
        family=family,
        seed=task_seed,
        split=split,
        calls=trace.calls,
        facts=trace.facts,
        gold_answer=answer,
    )


def check_families(families: Iterable[str], split: str, *, owner: str) -> list[str]:
    """Validate family names for ``split`` and return them as a list.

    Args:
        families: Family names, from :data:`ALL_FAMILIES`.
        split: The split the tasks are generated for.
        owner: Who asks (a function or a config field), named in the error.

    Raises:
        ConfigError: a single string instead of a list, the list is empty, a name is unknown, or
            a held-out family is asked for in ``train`` or ``test-seen`` (which would leak it
            into training or seen evaluation).
    """
    if isinstance(families, str):
        raise ConfigError(f"{owner}: expected a list of family names, got {families!r}")
    chosen = list(families)
    unknown = [name for name in chosen if name not in ALL_FAMILIES]
    if unknown or not chosen:
        raise ConfigError(
            f"{owner}: unknown {', '.join(unknown) or '(empty list)'}; "
            f"use names from {', '.join(sorted(ALL_FAMILIES))}"
        )
    leaked = [name for name in chosen if name not in FAMILIES]
    if split in ("train", "test-seen") and leaked:
        raise ConfigError(f"{owner}: split {split!r} may not use held-out families {leaked}")
    return chosen


def generate_tasks(
    n: int, *, seed: int = 0, split: str = "train", families: Iterable[str] | None = None
) -> list[Task]:
    """Generate ``n`` tasks, cycling through ``families`` (default: the split's), reproducibly.

    ``train`` and ``test-seen`` (and any other label) draw from :data:`FAMILIES`;
    ``test-unseen-tools`` from :data:`UNSEEN_TOOL_FAMILIES` (calls :data:`HELD_OUT_TOOLS`);
    ``test-unseen-categories`` from :data:`UNSEEN_CATEGORY_FAMILIES` (only
    :data:`HELD_OUT_CATEGORIES`). Different splits draw different worlds.

    Args:
        n: Number of tasks.
        seed: Generator seed; with ``split`` it fixes every task and its world seed.
        split: Split label (see :data:`paraagent_runtime.tasks.SPLITS`).
        families: Family names to draw from, from :data:`ALL_FAMILIES`.

    Raises:
        ConfigError: ``n`` is negative, a family name is unknown, or a held-out family is asked
            for in a split that is not held out (train or test-seen would leak it).
    """
    if n < 0:
        raise ConfigError(f"generate_tasks: need n >= 0, got n={n}")
    chosen = (
        check_families(families, split, owner="generate_tasks")
        if families is not None
        else split_families(split)
    )
    rng = random.Random(f"tasks:{seed}:{split}")
    tasks = []
    for index in range(n):
        task_seed = rng.randrange(2**31)
        task_rng = random.Random(f"task:{seed}:{split}:{index}")
        tasks.append(
            _build(
                chosen[index % len(chosen)],
                index,
                seed=seed,
                split=split,
                task_seed=task_seed,
                rng=task_rng,
            )
        )
    return tasks


def builtin_tasks() -> list[Task]:
    """A fixed handful of tasks, one per family (used by ``make run``)."""
    return generate_tasks(len(FAMILIES), seed=0, split="builtin")

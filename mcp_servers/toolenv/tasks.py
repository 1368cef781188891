"""Verifiable tasks over the built-in catalog: the task families and their generator.

A task (:class:`paraagent_runtime.tasks.Task`) is a query, a gold call DAG, and the facts an
answer needs.

Each task family picks entities from a seeded world, then *runs* its gold DAG against a simulator
of that world (:class:`.trace.Trace`): a node's arguments may be bound to fields of earlier
outputs (``bindings``), and answer facts are read from the outputs (``AnswerFact.source``).
Nothing is hard-coded, so the same task replayed in ``ToolEnv.for_task(task)`` reproduces every
value. The query is worded from the family's phrasing pool for the split (:mod:`.phrasing`);
hidden-need families live in :mod:`.hidden_needs`. ``train``, ``dev`` and ``test-seen`` own
disjoint buckets of :func:`task_key`, so no dev or test task asks what a train task asks. Groups
follow StableToolBench: G1 = one tool, G2 = several tools of one category, G3 = several
categories.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from paraagent_runtime import AnswerFact, ConfigError, Task, resolve_binding

from .builtin import builtin_records
from .geo import CITIES
from .hidden_needs import HELD_OUT_HIDDEN_NEED_FAMILIES, HIDDEN_NEED_FAMILIES
from .phrasing import currency_words, human_date, language_words, nights_words, say
from .simulator import ToolEnvSimulator
from .trace import Family, RetryTask, Trace, join_and, pick

__all__ = [
    "ALL_FAMILIES",
    "FAMILIES",
    "HELD_OUT_CATEGORIES",
    "HELD_OUT_TOOLS",
    "SPLIT_BUCKETS",
    "STATED_FAMILIES",
    "UNSEEN_CATEGORY_FAMILIES",
    "UNSEEN_SPLITS",
    "UNSEEN_TOOL_FAMILIES",
    "builtin_tasks",
    "check_families",
    "execute_gold",
    "generate_tasks",
    "key_bucket",
    "split_families",
    "task_key",
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


_Trace = Trace
"""The trace under its former name (the catalog families build on it)."""


_CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD")


def _multi_city_weather(trace: Trace, rng: random.Random) -> tuple[str, str]:
    cities = [c.name for c in rng.sample(CITIES, rng.randint(2, 4))]
    lines = []
    for city in cities:
        node = trace.call("weather/get_current_weather", {"city": city})
        temp = trace.fact(f"{node}.temperature", f"temperature in {city}", tolerance=0.15)
        condition = trace.fact(f"{node}.condition", f"sky in {city}")
        lines.append(f"{city}: {temp}°C, {condition}")
    query = say("multi_city_weather", trace.split, rng, c=join_and(cities))
    return query, "Right now — " + "; ".join(lines) + "."


def _flight_arrival_weather(trace: Trace, rng: random.Random) -> tuple[str, str]:
    number = rng.choice(trace.world.flight_numbers)
    n1 = trace.call("aviation/get_flight", {"flight_number": number})
    n2 = trace.call("weather/get_current_weather", {}, bind={"city": f"{n1}.destination.city"})
    city = trace.fact(f"{n1}.destination.city", "arrival city")
    temp = trace.fact(f"{n2}.temperature", "temperature at arrival city", tolerance=0.15)
    query = say("flight_arrival_weather", trace.split, rng, n=number)
    return query, f"Flight {number} arrives in {city}, where it is currently {temp}°C."


def _stock_in_currency(trace: Trace, rng: random.Random) -> tuple[str, str]:
    stock = rng.choice(sorted(trace.world.stocks.values(), key=lambda s: s.symbol))
    target = rng.choice([c for c in _CURRENCY_CODES if c != stock.currency])
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
    query = say(
        "stock_in_currency",
        trace.split,
        rng,
        name=stock.name,
        sym=stock.symbol,
        cur=target,
        curw=currency_words(target, trace.style),
    )
    answer = f"{stock.symbol} trades at {price} {stock.currency}, which is {amount} {target}."
    return query, answer


def _hotel_compare(trace: Trace, rng: random.Random) -> tuple[str, str]:
    day = trace.world.today + timedelta(days=rng.randint(3, 30))
    nights = rng.randint(1, 4)
    cities = [c.name for c in rng.sample(CITIES, rng.randint(2, 3))]
    lines = []
    for city in cities:
        node = trace.call(
            "hotels/search_hotels",
            {"city": city, "check_in": day.isoformat(), "nights": nights, "sort_by": "price"},
        )
        name = trace.fact(f"{node}.hotels.0.name", f"cheapest hotel in {city}")
        total = trace.fact(
            f"{node}.hotels.0.total_price_usd", f"its total in {city}", tolerance=0.02
        )
        lines.append(f"{city}: {name} at {total} USD")
    query = say(
        "hotel_compare",
        trace.split,
        rng,
        c=join_and(cities),
        n=nights,
        d=day.isoformat(),
        nights=nights_words(nights, trace.style),
        day=human_date(day, trace.style, year=True),
    )
    return query, "Cheapest options — " + "; ".join(lines) + "."


def _trip_briefing(trace: Trace, rng: random.Random) -> tuple[str, str]:
    flight = trace.world.flight(rng.choice(trace.world.flight_numbers))
    target = flight.destination.currency if flight.destination.currency != "USD" else "EUR"
    tomorrow = trace.world.today + timedelta(days=1)
    n1 = trace.call("aviation/get_flight", {"flight_number": flight.number})
    dest = f"{n1}.destination.city"
    n2 = trace.call("weather/get_current_weather", {}, bind={"city": dest})
    n3 = trace.call(
        "hotels/search_hotels",
        {"check_in": tomorrow.isoformat(), "nights": 2, "sort_by": "price"},
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
    query = say(
        "trip_briefing",
        trace.split,
        rng,
        n=flight.number,
        d=tomorrow.isoformat(),
        cur=target,
        day=human_date(tomorrow, trace.style, year=True),
        curw=currency_words(target, trace.style),
    )
    answer = (
        f"{flight.number} lands in {city}: {temp}°C now, local time {local}. Cheapest hotel: "
        f"{hotel}, {total} {target} for 2 nights."
    )
    return query, answer


def _match_venue_forecast(trace: Trace, rng: random.Random) -> tuple[str, str]:
    league = rng.choice(sorted(trace.world.leagues))
    team = rng.choice(trace.world.leagues[league].teams)
    n1 = trace.call("sports/get_next_match", {"team": team})
    match_day = date.fromisoformat(trace.get(f"{n1}.match.date"))
    index = (match_day - trace.world.today).days
    n2 = trace.call("weather/get_forecast", {"days": 7}, bind={"city": f"{n1}.match.venue_city"})
    venue = trace.fact(f"{n1}.match.venue_city", "venue city")
    when = trace.fact(f"{n1}.match.date", "match date")
    high = trace.fact(f"{n2}.days.{index}.high", "forecast high on match day", tolerance=0.15)
    query = say("match_venue_forecast", trace.split, rng, t=team)
    return query, f"The {team} play next on {when} in {venue}; the forecast high is {high}°C."


def _email_contact(trace: Trace, rng: random.Random) -> tuple[str, str]:
    contact = rng.choice(trace.world.contacts)
    topic = pick(
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
    query = say("email_contact", trace.split, rng, name=contact.name, topic=topic)
    return query, f"I sent the note to {contact.name} at {address}."


def _city_pair_facts(trace: Trace, rng: random.Random) -> tuple[str, str]:
    a, b = (c.name for c in rng.sample(CITIES, 2))
    n1 = trace.call("maps/get_distance", {"origin": a, "destination": b})
    n2 = trace.call("time/get_time_difference", {"city": a, "other_city": b})
    km = trace.fact(f"{n1}.distance_km", "distance in km", tolerance=1.0)
    hours = trace.fact(f"{n2}.hours_ahead", "hours ahead", tolerance=0.01)
    query = say("city_pair_facts", trace.split, rng, a=a, b=b)
    return query, f"{a} and {b} are {km} km apart; {a} is {hours} hours ahead of {b}."


def _stock_compare(trace: Trace, rng: random.Random) -> tuple[str, str]:
    symbols = rng.sample(sorted(trace.world.stocks), rng.randint(2, 3))
    parts = []
    for symbol in symbols:
        node = trace.call("finance/get_stock_quote", {"symbol": symbol})
        price = trace.fact(f"{node}.price", f"price of {symbol}", tolerance=0.01)
        parts.append(f"{symbol} {price} {trace.get(f'{node}.currency')}")
    query = say("stock_compare", trace.split, rng, s=join_and(symbols))
    return query, "Latest prices: " + ", ".join(parts) + "."


STATED_FAMILIES: dict[str, Family] = {
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
"""The seen families whose query states every need (the original nine)."""

FAMILIES: dict[str, Family] = {**STATED_FAMILIES, **HIDDEN_NEED_FAMILIES}
"""The seen families: ``train``, ``dev`` and ``test-seen`` draw from these (and any other label):
the stated-need ones, then the hidden-need ones (:mod:`.hidden_needs`)."""


def _air_quality_compare(trace: Trace, rng: random.Random) -> tuple[str, str]:
    cities = [c.name for c in rng.sample(CITIES, rng.randint(2, 4))]
    parts = []
    for city in cities:
        node = trace.call("weather/get_air_quality", {"city": city})
        aqi = trace.fact(f"{node}.aqi", f"AQI in {city}", tolerance=0.5)
        parts.append(f"{city} AQI {aqi}")
    query = say("air_quality_compare", trace.split, rng, c=join_and(cities))
    return query, "Air quality — " + ", ".join(parts) + "."


def _airport_sun_times(trace: Trace, rng: random.Random) -> tuple[str, str]:
    airports = [c.airport for c in rng.sample(CITIES, rng.randint(1, 2))]
    day = trace.world.today + timedelta(days=rng.randint(0, 5))
    parts = []
    for code in airports:
        n1 = trace.call("aviation/get_airport", {"code": code})
        n2 = trace.call(
            "weather/get_sun_times", {"date": day.isoformat()}, bind={"city": f"{n1}.city"}
        )
        city = trace.fact(f"{n1}.city", f"city of {code}")
        sunset = trace.fact(f"{n2}.sunset", f"sunset at {code}")
        parts.append(f"{code} serves {city}, sunset {sunset}")
    query = say(
        "airport_sun_times",
        trace.split,
        rng,
        a=join_and(airports),
        d=day.isoformat(),
        day=human_date(day, trace.style, year=True),
    )
    return query, "; ".join(parts) + "."


def _company_fx(trace: Trace, rng: random.Random) -> tuple[str, str]:
    stock = rng.choice(sorted(trace.world.stocks.values(), key=lambda s: s.symbol))
    quote = rng.choice([c for c in _CURRENCY_CODES[:5] if c != stock.currency])
    n1 = trace.call("finance/get_company_profile", {"symbol": stock.symbol})
    n2 = trace.call("currency/get_exchange_rate", {"quote": quote}, bind={"base": f"{n1}.currency"})
    headquarters = trace.fact(f"{n1}.headquarters", f"headquarters of {stock.symbol}")
    rate = trace.fact(f"{n2}.rate", f"rate of its currency to {quote}", tolerance=0.01)
    query = say(
        "company_fx",
        trace.split,
        rng,
        sym=stock.symbol,
        q=quote,
        qw=currency_words(quote, trace.style),
    )
    currency = trace.get(f"{n1}.currency")
    return query, f"{stock.symbol} is based in {headquarters}; 1 {currency} = {rate} {quote}."


def _recipe_nutrition(trace: Trace, rng: random.Random) -> tuple[str, str]:
    diet = pick(rng, ("vegetarian", "vegan", "gluten free"))
    servings = rng.randint(1, 4)
    n1 = trace.call("recipes/search_recipes", {"diet": diet})
    n2 = trace.call(
        "recipes/get_nutrition",
        {"servings": servings},
        bind={"recipe_id": f"{n1}.recipes.0.recipe_id"},
    )
    name = trace.fact(f"{n1}.recipes.0.name", "first recipe found")
    calories = trace.fact(f"{n2}.calories", f"calories for {servings} serving(s)", tolerance=1.0)
    portions = "just me" if servings == 1 else f"{servings} people"
    query = say(
        "recipe_nutrition", trace.split, rng, diet=diet, servings=servings, portions=portions
    )
    return query, f"{name}: {calories} kcal for {servings} serving(s)."


def _translate_phrase(trace: Trace, rng: random.Random) -> tuple[str, str]:
    phrase = pick(rng, ("good morning", "thank you", "good night", "see you tomorrow"))
    languages = rng.sample(("de", "fr", "es", "it", "pt"), rng.randint(2, 3))
    parts = []
    for language in languages:
        node = trace.call(
            "translation/translate_text", {"text": phrase, "target_language": language}
        )
        parts.append(
            f"{language}: {trace.fact(f'{node}.translation', f'{phrase!r} in {language}')}"
        )
    query = say(
        "translate_phrase",
        trace.split,
        rng,
        p=phrase,
        langs=join_and(languages),
        names=join_and([language_words(code) for code in languages]),
    )
    return query, "; ".join(parts) + "."


def _movie_showtimes(trace: Trace, rng: random.Random) -> tuple[str, str]:
    city = rng.choice(CITIES).name
    day = trace.world.today + timedelta(days=rng.randint(0, 6))
    n1 = trace.call("movies/search_movies", {"query": "the"})
    n2 = trace.call(
        "movies/get_showtimes",
        {"city": city, "date": day.isoformat()},
        bind={"movie_id": f"{n1}.movies.0.movie_id"},
    )
    title = trace.fact(f"{n1}.movies.0.title", "first film found")
    cinema = trace.fact(f"{n2}.showtimes.0.cinema", "cinema of the first showtime")
    price = trace.fact(f"{n2}.showtimes.0.price", "ticket price", tolerance=0.01)
    query = say(
        "movie_showtimes",
        trace.split,
        rng,
        city=city,
        d=day.isoformat(),
        day=human_date(day, trace.style, year=True),
    )
    return query, f"{title} shows first at {cinema}; a ticket costs {price}."


UNSEEN_TOOL_FAMILIES: dict[str, Family] = {
    "air_quality_compare": _air_quality_compare,
    "airport_sun_times": _airport_sun_times,
    "company_fx": _company_fx,
    **HELD_OUT_HIDDEN_NEED_FAMILIES["test-unseen-tools"],
}
"""Families of ``test-unseen-tools``: seen categories, tools no seen family calls."""

UNSEEN_CATEGORY_FAMILIES: dict[str, Family] = {
    "recipe_nutrition": _recipe_nutrition,
    "translate_phrase": _translate_phrase,
    "movie_showtimes": _movie_showtimes,
    **HELD_OUT_HIDDEN_NEED_FAMILIES["test-unseen-categories"],
}
"""Families of ``test-unseen-categories``: each touches a category no seen family touches."""

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


_BUCKETS = 20
SPLIT_BUCKETS: dict[str, range] = {
    "train": range(0, 14),
    "dev": range(14, 17),
    "test-seen": range(17, 20),
}
"""Which hash buckets of :func:`task_key` each seen split owns: no key is in two of them."""


def task_key(task: Task) -> str:
    """What a task asks about: its family and the chosen names its answer states.

    The names are the string arguments the task chose (bound ones, read from earlier outputs,
    are left out) that its gold answer mentions: cities, tickers, flights, people, teams. They
    form a set, so a pair asked the other way round (Cairo–Mumbai, Mumbai–Cairo) has the same
    key, and wording-only choices (an e-mail's topic, a check-in date the answer does not state)
    do not split one answer over two keys. A task whose answer names none of them is keyed by
    all its arguments.
    """
    chosen = [
        value
        for call in task.calls
        for name, value in call.arguments.items()
        if name not in call.bindings
    ]
    answer = task.gold_answer.casefold()
    named = {value for value in chosen if isinstance(value, str) and value.casefold() in answer}
    values = named or {json.dumps(value, sort_keys=True) for value in chosen}
    return task.family + "|" + "|".join(sorted(values))


def key_bucket(key: str) -> int:
    """The hash bucket (``0..19``) of a :func:`task_key`, the same in every process."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % _BUCKETS


_MAX_ATTEMPTS = 200


def _draw(family: str, index: int, *, seed: int, split: str, task_seed: int) -> Task:
    """Task ``index`` of a split: redrawn until its key lies in the split's buckets."""
    owned = SPLIT_BUCKETS.get(split)
    rng = random.Random(f"task:{seed}:{split}:{index}")
    for attempt in range(_MAX_ATTEMPTS):
        if attempt:
            rng = random.Random(f"retry:{seed}:{split}:{index}:{attempt}")
            task_seed = rng.randrange(2**31)
        trace = Trace(
            ToolEnvSimulator(builtin_records(), seed=task_seed),
            split=split,
            style=random.Random(f"style:{seed}:{split}:{index}:{attempt}"),
        )
        try:
            query, answer = ALL_FAMILIES[family](trace, rng)
        except RetryTask:
            continue
        task = Task(
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
        if owned is None or key_bucket(task_key(task)) in owned:
            return task
    raise ConfigError(
        f"generate_tasks: no {family} task for split {split!r} after {_MAX_ATTEMPTS} draws"
    )


UNSEEN_SPLITS: tuple[str, ...] = ("test-unseen-tools", "test-unseen-categories")
"""The splits that may draw held-out families."""


def check_families(families: Iterable[str], split: str, *, owner: str) -> list[str]:
    """Validate family names for ``split`` and return them as a list.

    Args:
        families: Family names, from :data:`ALL_FAMILIES`.
        split: The split the tasks are generated for.
        owner: Who asks (a function or a config field), named in the error.

    Raises:
        ConfigError: a single string instead of a list, the list is empty, a name is unknown, or
            a held-out family is asked for in any split but the two unseen test splits (which
            would leak it into training, selection or seen evaluation).
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
    if split not in UNSEEN_SPLITS and leaked:
        raise ConfigError(
            f"{owner}: split {split!r} may not use held-out families {leaked} "
            f"(only {' and '.join(UNSEEN_SPLITS)} may)"
        )
    return chosen


def generate_tasks(
    n: int, *, seed: int = 0, split: str = "train", families: Iterable[str] | None = None
) -> list[Task]:
    """Generate ``n`` tasks, cycling through ``families`` (default: the split's), reproducibly.

    ``train``, ``dev`` and ``test-seen`` (and any other label) draw from :data:`FAMILIES`;
    ``test-unseen-tools`` from :data:`UNSEEN_TOOL_FAMILIES` (calls :data:`HELD_OUT_TOOLS`);
    ``test-unseen-categories`` from :data:`UNSEEN_CATEGORY_FAMILIES` (touches
    :data:`HELD_OUT_CATEGORIES`). Each split has its own seeds and worlds; ``train``, ``dev`` and
    ``test-seen`` own disjoint buckets of :func:`task_key` (a task whose key lies elsewhere is
    redrawn), so no dev or test-seen task asks what any train task asks, whatever the seeds and
    sizes; test splits use the test phrasings (:mod:`.phrasing`).

    Args:
        n: Number of tasks.
        seed: Generator seed; with ``split`` it fixes every task and its world seed.
        split: Split label (see :data:`paraagent_runtime.tasks.SPLITS`).
        families: Family names to draw from, from :data:`ALL_FAMILIES`.

    Raises:
        ConfigError: ``n`` is negative, a family name is unknown, or a held-out family is asked
            for outside the unseen test splits.
    """
    if n < 0:
        raise ConfigError(f"generate_tasks: need n >= 0, got n={n}")
    chosen = (
        check_families(families, split, owner="generate_tasks")
        if families is not None
        else split_families(split)
    )
    split_rng = random.Random(f"tasks:{seed}:{split}")
    return [
        _draw(
            chosen[index % len(chosen)],
            index,
            seed=seed,
            split=split,
            task_seed=split_rng.randrange(2**31),
        )
        for index in range(n)
    ]


def builtin_tasks() -> list[Task]:
    """A fixed handful of tasks, one per stated-need family (``make run`` takes the first 6).

    They are the same nine tasks as before the hidden-need families, worded as in training, so
    ``make run`` and the results recorded on them stay comparable.
    """
    return generate_tasks(
        len(STATED_FAMILIES), seed=0, split="builtin", families=list(STATED_FAMILIES)
    )

"""How people ask: hand-written phrasings per task family, split so test wording is never train's.

Each family has a pool of templates per side: ``train`` (also ``dev`` and any non-test label,
the wording the shipped policy was trained on comes first) and ``test`` (every ``test-*`` split).
The two pools share no template, so a test query never repeats a train query's wording; a test
(``tests/mcp_servers/toolenv/test_phrasing.py``) checks the pools are disjoint. ``dev`` uses the
train wording on purpose: it picks checkpoints on unseen entities and worlds, and the test splits
then add unseen wording on top. Dates, amounts and currencies are written as people write them
("Sunday 1 June", "3 nights", "$250", "in euros"), drawn from the trace's style stream.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date

from paraagent_runtime import TEST_SPLITS

__all__ = [
    "PHRASINGS",
    "Phrasings",
    "currency_words",
    "human_date",
    "language_words",
    "money",
    "nights_words",
    "say",
]


@dataclass(frozen=True)
class Phrasings:
    """The templates of one family: ``train`` for training-side splits, ``test`` for test ones.

    Held-out families appear only in test splits; their ``train`` side is empty.
    """

    test: tuple[str, ...]
    train: tuple[str, ...] = ()

    def pool(self, split: str) -> tuple[str, ...]:
        """The templates ``split`` draws from."""
        return self.test if split in TEST_SPLITS or not self.train else self.train


def say(family: str, split: str, rng: random.Random, **slots: object) -> str:
    """A query of ``family`` for ``split``: one of its templates (drawn from ``rng``), filled."""
    pool = PHRASINGS[family].pool(split)
    template = pool[rng.randrange(len(pool))] if len(pool) > 1 else pool[0]
    return template.format(**slots)


def _ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def human_date(day: date, rng: random.Random, *, year: bool = False) -> str:
    """``day`` as a person writes it: "June 1st", "Sunday 1 June", "Sun 1 Jun", "the 1st of June".

    Args:
        day: The date.
        rng: The style stream.
        year: Append the year (for tools that need a full date, such as a hotel check-in).
    """
    styles = (
        f"{day:%B} {_ordinal(day.day)}",
        f"{day:%A} {day.day} {day:%B}",
        f"{day:%a} {day.day} {day:%b}",
        f"the {_ordinal(day.day)} of {day:%B}",
        f"{day.day} {day:%B}",
        f"{day:%A}, {day:%B} {_ordinal(day.day)}",
    )
    text = styles[rng.randrange(len(styles))]
    return f"{text} {day.year}" if year else text


_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven")


def nights_words(nights: int, rng: random.Random) -> str:
    """The stay as people write it: 3 nights, three nights or one night."""
    count = _NUMBERS[nights] if rng.random() < 0.5 and nights < len(_NUMBERS) else str(nights)
    return f"{count} night" + ("" if nights == 1 else "s")


_CURRENCY_WORDS: dict[str, tuple[str, ...]] = {
    "USD": ("US dollars", "dollars", "USD"),
    "EUR": ("euros", "EUR"),
    "GBP": ("pounds", "British pounds", "GBP", "sterling"),
    "JPY": ("yen", "Japanese yen", "JPY"),
    "CHF": ("Swiss francs", "CHF"),
    "CAD": ("Canadian dollars", "CAD"),
}
_SYMBOLS: dict[str, str] = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def currency_words(code: str, rng: random.Random) -> str:
    """A currency named as people do ("euros", "Swiss francs"), or its code."""
    options = _CURRENCY_WORDS.get(code, (code,))
    return options[rng.randrange(len(options))]


def money(amount: float, code: str, rng: random.Random) -> str:
    """An amount as people write it: "$250", "250 dollars", "€80", "80 EUR"."""
    number = f"{amount:g}"
    choices = [f"{number} {code}", f"{number} {currency_words(code, rng)}"]
    if code in _SYMBOLS:
        choices.append(f"{_SYMBOLS[code]}{number}")
    return choices[rng.randrange(len(choices))]


_LANGUAGES = {"de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese"}


def language_words(code: str) -> str:
    """The English name of a language code."""
    return _LANGUAGES[code]


PHRASINGS: dict[str, Phrasings] = {
    "multi_city_weather": Phrasings(
        train=(
            "What's the weather like right now in {c}?",
            "Compare the current temperatures in {c}.",
            "I need the current conditions for {c} — temperature and sky, please.",
        ),
        test=(
            "Is it warm in {c} at the moment? Temperature and sky for each, please.",
            "quick weather check for {c} — temp and conditions?",
            "Could you tell me what it's doing outside in {c} right now, temperature and "
            "whether it's clear or not?",
            "{c}: current temp and sky?",
            "Heading out soon. How is the weather currently looking in {c}?",
            "How hot or cold is it right now in {c}, and what's the sky doing?",
        ),
    ),
    "flight_arrival_weather": Phrasings(
        train=(
            "I'm on flight {n}. What's the weather like right now where I land?",
            "Where does {n} arrive, and how warm is it there at the moment?",
        ),
        test=(
            "Landing soon on {n} — how warm is it at the other end right now?",
            "{n}: which city does it land in and what's the temperature there now?",
            "My sister is on {n}. Where is she landing and what's the weather doing there now?",
            "Do I need a coat when I get off {n}? How warm is it there right now?",
            "Which city does {n} fly into, and what's the current temperature there?",
            "where's {n} headed and how warm is it at the other end right now",
        ),
    ),
    "stock_in_currency": Phrasings(
        train=(
            "What is one share of {name} ({sym}) worth in {cur} right now?",
            "Convert the current {sym} share price to {cur}.",
        ),
        test=(
            "How much is a single {name} share in {curw} today?",
            "{sym} price, converted to {curw}?",
            "I'm paid in {curw}. What would one {sym} share cost me right now?",
            "Convert one share of {name} ({sym}) into {curw} at today's rate.",
        ),
    ),
    "hotel_compare": Phrasings(
        train=(
            "Find the cheapest hotel in each of {c} for {n} night(s) from {d}, with the total "
            "price.",
        ),
        test=(
            "Cheapest place to stay in each of {c}? {nights} from {day}, total price please.",
            "I need a hotel for {nights} starting {day}. What's the cheapest option in {c}, "
            "and what does it cost in total?",
            "Which hotel is cheapest in each of {c} if I check in on {day} for {nights}? Give "
            "me the full cost.",
            "budget hotels in {c}, check-in {day}, {nights}: cheapest of each and the total",
            "Compare the cheapest hotels in {c}, {nights} from {day}; I need the total for each.",
        ),
    ),
    "trip_briefing": Phrasings(
        train=(
            "I'm taking {n} tomorrow. Give me a briefing for my destination: current "
            "temperature, local time, and the cheapest hotel for 2 nights from {d} with its "
            "total in {cur}.",
        ),
        test=(
            "Flying {n} tomorrow ({day}). Brief me on where I'm going: temperature now, what "
            "time it is there, and the cheapest hotel for two nights, priced in {curw}.",
            "Tomorrow I take {n}. What's the weather and the local time at the destination, and "
            "what's the cheapest 2-night stay from {day} in {curw}?",
            "Can you prep me for {n} tomorrow? Local time, current temperature, and the lowest "
            "two-night hotel total (check-in {day}) in {curw}.",
            "{n} tomorrow: what is it like at the destination right now (temperature, local time), "
            "and what's the cheapest hotel for two nights from {day}, in {curw}?",
        ),
    ),
    "match_venue_forecast": Phrasings(
        train=(
            "When and where do the {t} play next, and what's the forecast high there that day?",
            "Will it be warm for the {t}' next game? Tell me the date, the city and the "
            "expected high.",
        ),
        test=(
            "Planning to catch the {t} next time they play: where, when, and how hot is it "
            "supposed to get?",
            "{t} next game: date, city, forecast high?",
            "Do I need sunscreen for the {t}' next match? Tell me when and where it is and the "
            "predicted high.",
            "Where are the {t} playing next, on what date, and what high is forecast there?",
            "I want to go to the next {t} game. When, where, and how warm will it get?",
        ),
    ),
    "email_contact": Phrasings(
        train=("Email {name} a short note about {topic} and tell me which address you used.",),
        test=(
            "Drop {name} a quick email about {topic}, then tell me which address it went to.",
            "Can you send {name} a short message re {topic}? Let me know the email you used.",
            "Write to {name} about {topic} and confirm the address you sent it to.",
            "Send a short email to {name} about {topic} and tell me what address you used.",
            "Please email {name}, topic: {topic}. Which address did it go to?",
        ),
    ),
    "city_pair_facts": Phrasings(
        train=(
            "How far apart are {a} and {b} as the crow flies, and how many hours ahead of {b} "
            "is {a}?",
        ),
        test=(
            "Straight-line distance between {a} and {b}? And how many hours is {a} ahead of {b}?",
            "If I'm in {a} calling {b}, how many hours ahead am I, and how far apart are we as "
            "the crow flies?",
            "How many km separate {a} from {b}, and by how many hours is {a} ahead of {b}?",
            "{a} to {b}: distance as the crow flies, and how many hours ahead is {a}?",
            "I'm planning calls between {a} and {b}. How many hours ahead of {b} is {a}, and how "
            "far apart are the two cities?",
        ),
    ),
    "stock_compare": Phrasings(
        train=("Give me the latest share prices of {s}.",),
        test=(
            "What are {s} trading at?",
            "quotes for {s} please",
            "Could you pull the current share prices for {s}?",
            "How are {s} priced right now?",
            "Quick portfolio check: current prices of {s}.",
            "latest {s} quotes?",
        ),
    ),
    "flight_packing": Phrasings(
        train=(
            "I fly {n} on {day}. What should I pack, and what time is it over there right now?",
            "What clothes do I need for {n} on {day}? Also, what's the local time there now?",
            "Packing for {n}, leaving {day}: what will the weather be like when I get there, "
            "and what time is it there at the moment?",
            "I'm on {n} {day} — jacket or t-shirt? And tell me the current time at the other end.",
        ),
        test=(
            "Help me pack: I'm taking {n} on {day}. What's the weather going to be, and what "
            "time is it where I'm going?",
            "{n}, {day}. Shorts or a coat? Plus the local time there now, please.",
            "Going on {n} on {day} — what should go in the suitcase, and what's the clock "
            "saying at my destination right now?",
            "Should I bring an umbrella for {n} on {day}? And what time is it there now so I "
            "can text my host?",
        ),
    ),
    "match_budget": Phrasings(
        train=(
            "I've set aside {amount} for the {t}' next game. How far does that go where "
            "they're playing?",
            "I'm going to see the {t} next time they play and I'm bringing {amount}. Where is "
            "it, when, and what's my money worth there?",
            "Next {t} match: I have {amount} to spend. When and where is it, and how much is "
            "that locally?",
            "Work out what {amount} is worth at the {t}' next game, and tell me where and when "
            "it is.",
        ),
        test=(
            "Budget check: {amount} for the {t}' upcoming game. Which city, what date, and "
            "what's that in the money they use there?",
            "Following the {t} to their next fixture with {amount} in my pocket. Where and when "
            "is it, and what does my cash come to there?",
            "{t} next match — I've got {amount}. Where, when, and how much local money is that?",
        ),
    ),
    "contact_local_time": Phrasings(
        train=(
            "Is it a sensible hour to ring {names} right now?",
            "I want to call {names}. What time is it where they are?",
            "Would I be waking up {names} if I phoned now? Where are they and what's their "
            "local time?",
            "Check the local time for {names} before I ring.",
        ),
        test=(
            "Can I call {names} now without it being rude? Tell me their city and the time there.",
            "what time is it for {names} right now?",
            "Before I phone {names}: where do they live and what's the time there at the moment?",
        ),
    ),
    "company_visit_air": Phrasings(
        test=(
            "I'm visiting the head office of {companies} next week and I have asthma. Which "
            "city, and how's the air there right now?",
            "Trip to the headquarters of {companies} coming up. Which city, and what's the air "
            "quality index there today?",
            "Where are {companies} headquartered, and is the air clean enough to go jogging "
            "there right now? Give me the AQI.",
            "Should I pack a mask for my visit to the headquarters of {companies}? City and "
            "current AQI, please.",
        ),
    ),
    "meeting_followup": Phrasings(
        test=(
            "Who am I seeing in {next}, and what did {they} last email me about?",
            "Prep me for {next}: what is it, when, and what was the last email from {person}?",
            "Look at {next} on my calendar and remind me what {person} last wrote to me.",
            "{terse}: title, time, and the subject of the latest mail from {person}",
        ),
    ),
    "air_quality_compare": Phrasings(
        test=(
            "How clean is the air right now in {c}? Give me the AQI of each.",
            "Compare the air quality index of {c}.",
            "Is the air OK for a run in {c} today? AQI for each, please.",
            "air quality index {c}?",
            "Which of {c} has the cleanest air right now? List each AQI.",
        ),
    ),
    "airport_sun_times": Phrasings(
        test=(
            "I land at {a} on {d}. Which city is that, and when does the sun set there that day?",
            "Flying into {a} on {day}: which city is it and what time is sunset?",
            "When's sunset on {day} in the city served by {a}? And which city is that?",
            "Arriving at {a} on {day}. What city is that, and what time does it get dark?",
        ),
    ),
    "company_fx": Phrasings(
        test=(
            "Where is {sym} headquartered, and what is the exchange rate from the currency it "
            "reports in to {q}?",
            "{sym}: where's the HQ, and how many {qw} does one unit of its reporting currency buy?",
            "Which city is {sym} based in, and what's the rate from its reporting currency to "
            "{qw}?",
            "What's the home city of {sym}, and today's rate from the currency it reports in into "
            "{qw}?",
        ),
    ),
    "recipe_nutrition": Phrasings(
        test=(
            "Find me a {diet} recipe and tell me how many calories {servings} serving(s) of the "
            "first one have.",
            "Suggest a {diet} dish and tell me the calories for {portions}.",
            "I'm cooking {diet} tonight, {portions}. First recipe you find: how many calories "
            "in total?",
            "Any {diet} recipe ideas? Take the first and give me the total calories for "
            "{portions}.",
        ),
    ),
    "translate_phrase": Phrasings(
        test=(
            "How do I say {p!r} in {langs} (language codes)?",
            "Translate '{p}' into {names}.",
            "What is '{p}' in {names}?",
            "I want to greet people properly: '{p}' in {names}, please.",
        ),
    ),
    "movie_showtimes": Phrasings(
        test=(
            "Search films matching 'the', take the first hit and tell me where it shows first "
            "in {city} on {d} and the ticket price.",
            "Look up films with 'the' in the title; for the top result, what's the earliest "
            "screening in {city} on {day}, at which cinema, and how much is a ticket?",
            "Films with 'the' in the name: for the first match, where is its first showing in "
            "{city} on {day}, and what does a ticket cost?",
        ),
    ),
}
"""Every family's templates (see :class:`Phrasings`); slots are filled by the family."""

"""How people ask: hand-written phrasings per task family, split so test wording is never train's.

Each seen family has four pools of templates (:class:`Phrasings`): ``train`` (the wording the
first demos used; also ``builtin`` and any other label), ``paraphrases`` (more training wording,
``train`` split only), ``dev`` and ``test`` (every ``test-*`` split). No two pools share a
template, and the paraphrase and dev templates share no five-word run with the test ones (nor
dev with training's); ``tests/mcp_servers/toolenv/test_phrasing.py`` checks both. ``dev`` has
its own wording because a dev that reused the train wording picked a candidate (v2i, +18 points
on it) that did not beat v1 once test wording was added on top (test-seen −3 points): dev now
meets unseen wording as the test splits do. Dates, amounts and currencies are written as people
write them ("Sunday 1 June", "3 nights", "$250", "in euros"), drawn from the trace's style stream.
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
    """The templates of one family, one pool per side of the splits; no two pools share one.

    ``train`` is the wording of the first demonstrations: ``builtin`` and any other label draw
    only it (so ``make run``'s tasks and the results recorded on them stay as they were);
    ``paraphrases`` are more training wording, drawn by the ``train`` split alone; ``dev`` is
    dev's own wording, so a choice made on dev meets wording it was not trained on, as every
    test split does; ``test`` is the test splits'. Held-out families appear only in test
    splits; their other pools are empty.
    """

    test: tuple[str, ...]
    train: tuple[str, ...] = ()
    paraphrases: tuple[str, ...] = ()
    dev: tuple[str, ...] = ()

    def pool(self, split: str) -> tuple[str, ...]:
        """The templates ``split`` draws from."""
        if split in TEST_SPLITS or not self.train:
            return self.test
        if split == "dev":
            return self.dev or self.train
        if split == "train":
            return self.train + self.paraphrases
        return self.train


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
        paraphrases=(
            "Temperatures and conditions in {c} at this moment, please.",
            "what's it like outside in {c} now",
            "Give me a live weather report for {c}.",
            "Is it sunny or raining in {c} today? I'd like the current temperature too.",
            "Current weather for {c}?",
        ),
        dev=(
            "Pull up the live conditions in {c}: how many degrees, and is it cloudy?",
            "I'm curious about the weather in {c} as of now.",
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
        paraphrases=(
            "Tell me the destination of {n} and the weather there today.",
            "What's the current weather at the destination of flight {n}?",
            "Which city is {n} bound for, and what are conditions like there now?",
            "{n} destination weather?",
            "Look up {n} and tell me the temperature in its arrival city.",
        ),
        dev=(
            "Once {n} touches down, what temperature will greet me? Name the city too.",
            "Find out where flight {n} is going and give me the weather there at present.",
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
        paraphrases=(
            "Price of {sym} expressed in {curw}, please.",
            "How many {curw} would I need to buy one {name} share today?",
            "{name} stock in {cur}?",
            "Quote {sym} for me, but in {cur} rather than its home currency.",
            "What does {name} ({sym}) cost per share if I pay in {curw}?",
        ),
        dev=(
            "Show me the {sym} share price after conversion into {curw}.",
            "I want to know what a {name} share costs today, in {cur}.",
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
        paraphrases=(
            "For {nights} from {d}, which hotel is the lowest-priced in each of {c}? Include "
            "the total.",
            "Lowest total hotel price in {c}, staying {nights} and arriving {day}.",
            "Hotel hunt across {c}: arriving {d} for {n} nights. Give the best-priced one per "
            "city and what it comes to.",
            "I'm staying {nights} from {day}. Tell me the least expensive hotel in every one of "
            "{c} and its total cost.",
            "What would the cheapest hotel cost in total in each of {c} for {nights} starting {d}?",
        ),
        dev=(
            "Over {nights} beginning {day}, where is it cheapest to sleep in {c}? One hotel per "
            "city, total cost.",
            "Lowest-cost hotel per city for {c}: check in {d}, {n} nights, overall price each.",
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
        paraphrases=(
            "Tomorrow's trip is on {n}. For the arrival city tell me the temperature now, the "
            "local time, and the lowest-priced 2-night hotel from {d} (total in {cur}).",
            "Get me ready for flight {n} tomorrow: destination weather, destination time, and "
            "the least expensive two-night hotel starting {day}, total converted to {curw}.",
            "I board {n} tomorrow. What's the temperature and the clock at the destination, and "
            "which hotel is cheapest for 2 nights from {d}? Give its total in {curw}.",
            "Destination rundown for {n} (tomorrow): current temperature, local time, cheapest "
            "2-night hotel from {day} with the total in {cur}.",
        ),
        dev=(
            "Taking {n} tomorrow. What's the arrival city's current temperature and local time, "
            "and the lowest total for a 2-night hotel from {d}, converted into {curw}?",
            "Summarise my arrival city for {n} tomorrow: weather now, the time there, and the "
            "cheapest two-night hotel beginning {day}, total in {cur}.",
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
        paraphrases=(
            "What's the date and city of the {t}' next fixture, and how high will the "
            "temperature get there?",
            "The {t} next play where and when? Also the forecast high for that day.",
            "Give me the {t}' upcoming game (date, venue city) plus the predicted maximum "
            "temperature.",
            "next {t} fixture: when, where, expected high",
            "I might go to the {t}' next game. Where and when is it, and what top temperature "
            "is forecast?",
        ),
        dev=(
            "Find the {t}' upcoming fixture and the forecast maximum at the venue that day, "
            "with its date and city.",
            "Upcoming {t} game: date, location, and how warm it's expected to be there.",
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
        paraphrases=(
            "Could you message {name} by email about {topic}? Report back the address.",
            "Shoot {name} an email on {topic} and let me know their email address.",
            "Get a note to {name} by email concerning {topic}, and tell me the address.",
            "I need {name} emailed about {topic}. Whose address did you use?",
            "Contact {name} by email about {topic} and report the address used.",
        ),
        dev=(
            "Look up {name}'s email, send them a quick line on {topic}, then report which "
            "address it was.",
            "Please fire off an email to {name} on the subject of {topic}; what address did it "
            "use?",
        ),
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
        paraphrases=(
            "Distance from {a} to {b} in km, and the hour difference between {a} and {b}?",
            "Tell me the kilometres between {a} and {b}, as well as how far ahead {a}'s clock "
            "is compared with {b}.",
            "{a} and {b}: kilometres between them, and {a}'s time offset from {b} in hours?",
            "Compare {a} with {b}: how far is one from the other, and {a}'s lead over {b} in "
            "hours?",
            "Give me the great-circle distance from {a} to {b}, and the number of hours {a} is "
            "ahead of {b}.",
        ),
        dev=(
            "How many kilometres is it from {a} over to {b}, and how much later is the clock in "
            "{a} than in {b}?",
            "Work out how far {a} is from {b}, plus the gap in hours between their clocks ({a} "
            "relative to {b}).",
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
        paraphrases=(
            "Current prices for {s}, please.",
            "Look up the share price of each of {s}.",
            "What's the latest quote on {s}?",
            "Show me where {s} stand today.",
            "Check {s} stock prices for me.",
        ),
        dev=(
            "I'd like today's share prices for {s}.",
            "Fetch stock quotes: {s}.",
        ),
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
        paraphrases=(
            "Flying {n} on {day}. Tell me the weather I'll land into and the time there right now.",
            "What should I wear off {n} on {day}, and what's the current local time at the "
            "destination?",
            "Before I take {n} on {day}, give me the destination forecast and its present local "
            "time.",
        ),
        dev=(
            "I'm booked on {n} for {day}. Suitcase advice from the forecast where it lands, "
            "plus the clock reading there now?",
            "{n} leaves {day}. What weather should I dress for on arrival, and what's the hour "
            "there currently?",
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
        paraphrases=(
            "Taking {amount} to the {t}' next match. Give me the place and date, and that sum "
            "in local money.",
            "How much is {amount} worth in the currency where the {t} play next? Include the "
            "date and city.",
            "I have {amount} for the next {t} game. Tell me the venue, the date, and the local "
            "value of my cash.",
        ),
        dev=(
            "If I bring {amount} to watch the {t} next time, what does it convert to at the "
            "venue, and where and when is the game?",
            "Next time the {t} play I'll have {amount} on me. Date, city, and its value in the "
            "local currency?",
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
        paraphrases=(
            "What's the current time for {names}?",
            "Ahead of phoning {names}, tell me where they are and their local time.",
            "Find out the local time of {names} right now.",
        ),
        dev=(
            "Is now an OK moment to ring {names}, or is it the middle of the night for them? "
            "City and time, please.",
            "For {names}: which city, and what hour is it there now?",
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

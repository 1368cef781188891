"""Hidden-need task families: a result names something whose tool the query never asked for.

In these families the query states one need (a flight, a team's next match, a contact, a
company, the next meeting) and the answer needs a tool that only the first result makes
necessary: the flight's destination decides whose forecast and clock matter, the venue's
currency decides whether money must be converted at all, a contact's city decides whose time to
read, a meeting's attendee decides whose mail to search. The gold DAG records every call; the
tools the query states are :data:`STATED_TOOLS` (per family) and every other gold call is
*revealed* by an earlier output (:func:`revealed_nodes`), which is what lets the oracle explore
lazily (ParaAct) or make a decoupled planner guess ahead.
"""

from __future__ import annotations

import random
from datetime import timedelta

from paraagent_runtime import AnswerFact, Task

from .phrasing import human_date, money, say
from .trace import Family, RetryTask, Trace, join_and

__all__ = [
    "HELD_OUT_HIDDEN_NEED_FAMILIES",
    "HIDDEN_NEED_FAMILIES",
    "STATED_TOOLS",
    "revealed_nodes",
]


def _local_time(trace: Trace, node: str, label: str) -> str:
    local = str(trace.get(f"{node}.local_time"))[-5:]
    trace.facts.append(AnswerFact(value=local, label=label, source=f"{node}.local_time"))
    return local


def _flight_packing(trace: Trace, rng: random.Random) -> tuple[str, str]:
    flight = trace.world.flight(rng.choice(trace.world.flight_numbers))
    offset = rng.randint(1, 4)
    day = trace.world.today + timedelta(days=offset)
    n1 = trace.call("aviation/get_flight", {"flight_number": flight.number})
    city_ref = f"{n1}.destination.city"
    n2 = trace.call("weather/get_forecast", {"days": 7}, bind={"city": city_ref})
    n3 = trace.call("time/get_current_time", {}, bind={"city": city_ref})
    index = offset + int(trace.get(f"{n1}.arrival_day_offset"))
    city = trace.fact(city_ref, "destination")
    condition = trace.fact(f"{n2}.days.{index}.condition", "sky on arrival day")
    high = trace.fact(f"{n2}.days.{index}.high", "high on arrival day", tolerance=0.15)
    low = trace.fact(f"{n2}.days.{index}.low", "low on arrival day", tolerance=0.15)
    local = _local_time(trace, n3, "local time there now")
    query = say(
        "flight_packing", trace.split, rng, n=flight.number, day=human_date(day, trace.style)
    )
    answer = (
        f"{flight.number} lands in {city}; on {trace.get(f'{n2}.days.{index}.date')} expect "
        f"{condition}, {low}–{high}°C. It is {local} there now."
    )
    return query, answer


def _match_budget(trace: Trace, rng: random.Random) -> tuple[str, str]:
    league = trace.world.leagues[rng.choice(sorted(trace.world.leagues))]
    team = rng.choice(league.teams)
    code = rng.choice(("USD", "EUR", "GBP"))
    amount = float(rng.randrange(60, 400, 10))
    n1 = trace.call("sports/get_next_match", {"team": team})
    n2 = trace.call("maps/geocode", {}, bind={"query": f"{n1}.match.venue_city"})
    venue = trace.fact(f"{n1}.match.venue_city", "venue city")
    when = trace.fact(f"{n1}.match.date", "match date")
    local = str(trace.get(f"{n2}.currency"))
    if local == code:
        trace.fact(f"{n2}.currency", "local currency")
        worth = f"the same {code} {amount:g}: no conversion needed"
    else:
        n3 = trace.call(
            "currency/convert_currency",
            {"amount": amount, "from_currency": code},
            bind={"to_currency": f"{n2}.currency"},
        )
        converted = trace.fact(f"{n3}.converted_amount", f"budget in {local}", tolerance=0.02)
        worth = f"{amount:g} {code} is {converted} {local}"
    query = say("match_budget", trace.split, rng, t=team, amount=money(amount, code, trace.style))
    return query, f"The {team} play next on {when} in {venue}; {worth}."


def _contact_local_time(trace: Trace, rng: random.Random) -> tuple[str, str]:
    people = rng.sample(trace.world.contacts, rng.randint(1, 3))
    found = [trace.call("email/find_contact", {"name": person.name}) for person in people]
    clocks = [
        trace.call("time/get_current_time", {}, bind={"city": f"{node}.contacts.0.city"})
        for node in found
    ]
    lines = []
    for person, node, clock in zip(people, found, clocks, strict=True):
        city = trace.fact(f"{node}.contacts.0.city", f"{person.name}'s city")
        local = _local_time(trace, clock, f"local time for {person.name}")
        lines.append(f"{person.name} is in {city}, where it is {local}")
    names = join_and([person.name for person in people])
    return say("contact_local_time", trace.split, rng, names=names), "; ".join(lines) + "."


def _company_visit_air(trace: Trace, rng: random.Random) -> tuple[str, str]:
    stocks = rng.sample(
        sorted(trace.world.stocks.values(), key=lambda s: s.symbol), rng.randint(1, 2)
    )
    profiles = [
        trace.call("finance/get_company_profile", {"symbol": stock.symbol}) for stock in stocks
    ]
    airs = [
        trace.call("weather/get_air_quality", {}, bind={"city": f"{node}.headquarters"})
        for node in profiles
    ]
    lines = []
    for stock, profile, air in zip(stocks, profiles, airs, strict=True):
        city = trace.fact(f"{profile}.headquarters", f"headquarters of {stock.symbol}")
        aqi = trace.fact(f"{air}.aqi", f"AQI at {stock.symbol}'s headquarters", tolerance=0.5)
        lines.append(f"{stock.name} is based in {city}, AQI {aqi}")
    companies = join_and([f"{stock.name} ({stock.symbol})" for stock in stocks])
    return say("company_visit_air", trace.split, rng, companies=companies), "; ".join(lines) + "."


def _meeting_followup(trace: Trace, rng: random.Random) -> tuple[str, str]:
    count = rng.randint(1, 2)
    n1 = trace.call("calendar/list_events", {})
    events = trace.get(f"{n1}.events")[:count]
    people = [event["attendees"][0] for event in events if event.get("attendees")]
    if len(set(people)) < count:
        raise RetryTask("too few meetings with distinct attendees in the coming week")
    searches = [
        trace.call("email/search_emails", {}, bind={"query": f"{n1}.events.{i}.attendees.0"})
        for i in range(count)
    ]
    if not all(trace.get(f"{node}.messages") for node in searches):
        raise RetryTask("an attendee of the next meetings never wrote")
    lines = []
    for i, node in enumerate(searches):
        title = trace.fact(f"{n1}.events.{i}.title", f"meeting {i + 1}")
        start = trace.fact(f"{n1}.events.{i}.start", f"start of meeting {i + 1}")
        subject = trace.fact(f"{node}.messages.0.subject", f"latest e-mail of attendee {i + 1}")
        lines.append(f"{title} at {start}; their latest e-mail: {subject!r}")
    one = count == 1
    query = say(
        "meeting_followup",
        trace.split,
        rng,
        next="my next meeting" if one else "my next two meetings",
        they="they" if one else "each of them",
        person="the person I'm meeting" if one else "each person I'm meeting",
        terse="next meeting" if one else "next 2 meetings",
    )
    return query, "; ".join(lines) + "."


HIDDEN_NEED_FAMILIES: dict[str, Family] = {
    "flight_packing": _flight_packing,
    "match_budget": _match_budget,
    "contact_local_time": _contact_local_time,
}
"""Seen hidden-need families (``train``, ``dev``, ``test-seen``)."""

HELD_OUT_HIDDEN_NEED_FAMILIES: dict[str, dict[str, Family]] = {
    "test-unseen-tools": {"company_visit_air": _company_visit_air},
    "test-unseen-categories": {"meeting_followup": _meeting_followup},
}
"""Hidden-need families held out for the unseen splits."""

STATED_TOOLS: dict[str, frozenset[str]] = {
    "flight_packing": frozenset({"aviation/get_flight"}),
    "match_budget": frozenset({"sports/get_next_match"}),
    "contact_local_time": frozenset({"email/find_contact"}),
    "company_visit_air": frozenset({"finance/get_company_profile"}),
    "meeting_followup": frozenset({"calendar/list_events"}),
}
"""Per hidden-need family, the tools its query states; every other gold tool is revealed."""


def revealed_nodes(task: Task) -> set[str]:
    """Gold nodes whose need only an earlier output reveals (empty outside hidden-need families)."""
    stated = STATED_TOOLS.get(task.family)
    if stated is None:
        return set()
    return {call.id for call in task.calls if call.tool not in stated}

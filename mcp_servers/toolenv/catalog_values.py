"""Meaningful values for catalog tasks: grounded simulated responses and which fields make facts.

The schema-driven generator (:mod:`.generic`) fills free-text fields with placeholders such as
``name_nova_313``. A task whose answer is a placeholder checks nothing a person would ask about,
so catalog tasks answer through :func:`grounded_handler`: the generic response with every
placeholder in a field whose name says what it holds (a city, a person, a title, a status, a
currency…) replaced by a plausible value of that kind, drawn from the same seeded stream. Facts
are then only taken from fields that mean something (:func:`meaningful_fact`): named quantities,
dates, enumerated states and grounded text; never identifiers, URLs, tokens or leftover
placeholders.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from typing import Any

from .generic import generate_response
from .records import ToolRecord
from .world import World
from .world_data import _FIRST, _LAST

__all__ = [
    "argument_value",
    "grounded_handler",
    "grounded_response",
    "meaningful_fact",
]

_PLACEHOLDER = re.compile(r"^[A-Za-z0-9_.$@-]*_[a-z]+_\d{3}$")
_RANDOM_ID = re.compile(r"^[a-z0-9]{10}$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_MAX_FACT_CHARS = 60

_CITIES = (
    "Lisbon",
    "Osaka",
    "Nairobi",
    "Toronto",
    "Valencia",
    "Krakow",
    "Melbourne",
    "Lyon",
    "Bogota",
    "Hamburg",
    "Seoul",
    "Dublin",
    "Porto",
    "Denver",
    "Cape Town",
)
_COUNTRIES = (
    "Portugal",
    "Japan",
    "Kenya",
    "Canada",
    "Spain",
    "Poland",
    "Australia",
    "France",
    "Colombia",
    "Germany",
    "South Korea",
    "Ireland",
    "Chile",
    "Norway",
)
_CURRENCIES = ("EUR", "USD", "JPY", "GBP", "CAD", "AUD", "CHF", "SEK", "KES", "BRL")
_LANGUAGES = ("English", "Portuguese", "Japanese", "German", "Spanish", "French", "Korean")
_COLORS = ("teal", "amber", "crimson", "navy", "olive", "coral", "slate")
_STATUSES = ("active", "pending", "completed", "suspended", "archived", "in review", "failed")
_KINDS = ("standard", "premium", "internal", "external", "scheduled", "manual", "shared")
_ADJECTIVES = (
    "Quarterly",
    "Northern",
    "Blue",
    "Annual",
    "Morning",
    "Silver",
    "Open",
    "Coastal",
    "Spring",
    "Urban",
    "Quiet",
    "Bright",
)
_NOUNS = (
    "Budget Review",
    "Harbor Project",
    "Product Launch",
    "Field Notes",
    "Design Sprint",
    "Market Report",
    "Team Offsite",
    "Garden Plan",
    "Data Pipeline",
    "Photo Archive",
    "Customer Survey",
    "Release Notes",
)
_SENTENCES = (
    "Shipment delayed by weather at the port",
    "Renewal confirmed for another twelve months",
    "Backup finished without errors overnight",
    "Customer asked for a callback on Monday",
    "Price drop expected after the spring sale",
    "Draft approved by the legal team",
    "Two seats left on the early session",
)
_STREETS = ("12 Rua Augusta", "48 Baker Street", "7 Rue Cler", "221 Elm Avenue", "3 Kanalstrasse")
_TIMEZONES = ("Europe/Lisbon", "Asia/Tokyo", "America/Toronto", "Africa/Nairobi", "Europe/Berlin")

_PERSON = (
    "author",
    "owner",
    "user",
    "username",
    "displayname",
    "fullname",
    "person",
    "contact",
    "creator",
    "assignee",
    "manager",
    "customer",
    "member",
    "sender",
    "recipient",
    "organizer",
    "artist",
    "reviewer",
)


def _person(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _title(rng: random.Random) -> str:
    return f"{rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)}"


_KINDS_BY_NAME: tuple[tuple[tuple[str, ...], Callable[[random.Random], str]], ...] = (
    (("firstname", "givenname"), lambda rng: rng.choice(_FIRST)),
    (("lastname", "surname", "familyname"), lambda rng: rng.choice(_LAST)),
    (_PERSON, _person),
    (("city", "town"), lambda rng: rng.choice(_CITIES)),
    (("province", "county"), lambda rng: rng.choice(_REGIONS)),
    (("country", "nation"), lambda rng: rng.choice(_COUNTRIES)),
    (("currency",), lambda rng: rng.choice(_CURRENCIES)),
    (("language", "locale", "lang"), lambda rng: rng.choice(_LANGUAGES)),
    (("color", "colour"), lambda rng: rng.choice(_COLORS)),
    (("timezone",), lambda rng: rng.choice(_TIMEZONES)),
    (("address", "street"), lambda rng: rng.choice(_STREETS)),
    (("status", "state", "phase", "stage"), lambda rng: rng.choice(_STATUSES)),
    (("type", "kind", "category", "tier", "plan", "level"), lambda rng: rng.choice(_KINDS)),
    (
        ("description", "summary", "message", "comment", "note", "reason", "text", "content"),
        lambda rng: rng.choice(_SENTENCES),
    ),
    (("title", "name", "label", "subject", "headline", "caption"), _title),
    (("version",), lambda rng: f"{rng.randint(1, 9)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"),
    (("phone", "mobile"), lambda rng: f"+1 555 01{rng.randint(10, 99)}"),
)


_REGIONS = ("Ontario", "Bavaria", "Queensland", "Catalonia", "California", "Hokkaido")
_NAMED_KINDS = frozenset(
    {
        "country",
        "city",
        "town",
        "language",
        "currency",
        "user",
        "author",
        "owner",
        "artist",
        "person",
        "member",
        "customer",
        "contact",
        "creator",
        "province",
        "county",
        "timezone",
    }
)
"""Things whose ``name`` is a value of their own kind (a country's name is a country)."""
_TITLED_NAMES = frozenset(
    {
        "name",
        "displayname",
        "fullname",
        "username",
        "firstname",
        "givenname",
        "lastname",
        "surname",
        "familyname",
        "productname",
        "projectname",
        "eventname",
        "itemname",
        "teamname",
        "companyname",
        "playlistname",
        "songname",
        "albumname",
        "artistname",
        "authorname",
    }
)
"""Names that hold a title or a person's name (other ``…name`` fields are identifiers)."""


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _value_for(field: str, rng: random.Random) -> str | None:
    """A plausible value for a field or argument named ``field``, or None for unknown kinds."""
    name = _norm(field)
    if not name or name.endswith(("id", "ids", "arn", "token", "key", "url", "uri", "hash")):
        return None
    if name.endswith("name") and name not in _TITLED_NAMES:
        # A bucket, domain, table or zone name is an identifier, not a title.
        return None
    for needles, draw in _KINDS_BY_NAME:
        if any(name == needle or name.endswith(needle) for needle in needles):
            return draw(rng)
    return None


def _ground(value: Any, field: str, owner: str, rng: random.Random) -> Any:
    """Ground ``value`` of ``field``; ``owner`` is what the field belongs to (its parent)."""
    if isinstance(value, dict):
        return {key: _ground(sub, str(key), field or owner, rng) for key, sub in value.items()}
    if isinstance(value, list):
        return [_ground(item, field, owner, rng) for item in value]
    if isinstance(value, str) and _PLACEHOLDER.match(value):
        # A country's or a language's name is a country or a language, not a title.
        if _norm(field) in ("name", "displayname"):
            if _norm(owner) in ("state", "region", "province"):
                return rng.choice(_REGIONS)
            if _norm(owner) in _NAMED_KINDS:
                return _value_for(owner, rng) or value
        return _value_for(field, rng) or value
    return value


def grounded_response(record: ToolRecord, arguments: dict[str, Any], *, seed: int) -> Any:
    """The generic response to a call with placeholders replaced by plausible values by field.

    Deterministic in ``(seed, tool, arguments)`` like the generic response it starts from.
    """
    response = generate_response(record, arguments, seed=seed)
    digest = hashlib.sha256(f"ground|{seed}|{record.id}|{sorted(arguments.items())!r}".encode())
    # Top-level fields belong to what the operation is about: get_language → a language.
    words = re.findall(r"[A-Za-z][a-z]*", record.name.rsplit("/", 1)[-1])
    return _ground(response, "", words[-1] if words else "", random.Random(digest.hexdigest()))


def grounded_handler(record: ToolRecord) -> Callable[[World, dict[str, Any]], Any]:
    """A simulator handler answering ``record`` with :func:`grounded_response`."""

    def handler(world: World, arguments: dict[str, Any]) -> Any:
        return grounded_response(record, arguments, seed=world.seed)

    return handler


def argument_value(name: str, schema: dict[str, Any], rng: random.Random) -> str | None:
    """A plausible free-text value for argument ``name`` (None: keep the sampled one).

    Only plain strings without an enum, format or pattern are replaced, since the schema's own
    constraints already say what those hold.
    """
    if schema.get("type") not in (None, "string") or any(
        key in schema for key in ("enum", "format", "pattern", "const")
    ):
        return None
    value = _value_for(name, rng)
    limit = schema.get("maxLength")
    if value is None or (isinstance(limit, int) and len(value) > limit):
        return None
    return value


_NOISE = frozenset(
    {
        "kind",
        "etag",
        "selflink",
        "nextpagetoken",
        "pagetoken",
        "cursor",
        "offset",
        "limit",
        "page",
        "pagesize",
        "startindex",
        "maxresults",
        "listlength",
        "apiversion",
        "schema",
        "requestid",
        "signature",
        "checksum",
        "md5",
        "sha",
        "sha256",
        "password",
        "secret",
    }
)


def meaningful_fact(path: str, value: Any, echoed: set[str]) -> bool:
    """Whether the output field at ``path`` holding ``value`` is worth asking about.

    Named quantities, dates, enumerated states and grounded text are; identifiers, links,
    tokens, paging fields, echoed arguments and placeholders are not.
    """
    leaf = _norm(path.rsplit(".", 1)[-1])
    if (
        isinstance(value, bool)
        or value is None
        or not leaf
        or leaf in _NOISE
        or "error" in path.lower()
        or leaf.endswith(("id", "ids", "arn", "token", "url", "uri", "hash", "key", "link"))
        or str(value) in echoed
    ):
        return False
    if isinstance(value, int | float):
        return abs(value) < 1e12
    return (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_FACT_CHARS
        and (any(ch.isalpha() for ch in value) or bool(_DATE.match(value)))
        and not _PLACEHOLDER.match(value)
        and not _RANDOM_ID.match(value)
        and not _UUID.match(value)
        and "://" not in value
        and "@" not in value
    )

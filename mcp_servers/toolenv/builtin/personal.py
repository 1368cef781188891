"""The ``calendar`` and ``email`` providers.

They work over the user's seeded calendar, mailbox and contacts.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from paraagent_runtime.checker import normalize_name

from ..errors import ToolEnvNotFoundError
from ..world import Contact, Email, Event, World
from ._common import DATE, DATETIME, parse_day, stable_id
from ._registry import Provider
from ._schema import array, boolean, integer, obj, string

calendar = Provider("calendar", "Productivity")
email = Provider("email", "Communication")

EVENT_ID = string("Event id such as 'evt_0003'.", pattern=r"^evt_[0-9a-z]{4,8}$")
EMAIL_ADDRESS = string("E-mail address.", pattern=r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_EVENT = obj(
    {
        "event_id": string(),
        "title": string(),
        "start": string(),
        "end": string(),
        "location": string(),
        "attendees": array(string()),
    },
    ("event_id", "title", "start", "end"),
)
_CONTACT = obj(
    {"name": string(), "email": string(), "phone": string(), "company": string(), "city": string()},
    ("name", "email"),
)
_HEADER = obj(
    {
        "message_id": string(),
        "from": string(),
        "from_name": string(),
        "subject": string(),
        "received_at": string(),
        "unread": boolean(),
    },
    ("message_id", "from", "subject"),
)


def _event(event: Event) -> dict[str, Any]:
    return {
        "event_id": event.event_id,
        "title": event.title,
        "start": event.start,
        "end": event.end,
        "location": event.location,
        "attendees": list(event.attendees),
    }


def _header(mail: Email) -> dict[str, Any]:
    return {
        "message_id": mail.message_id,
        "from": mail.sender,
        "from_name": mail.sender_name,
        "subject": mail.subject,
        "received_at": mail.received_at,
        "unread": mail.unread,
    }


def _contact(contact: Contact) -> dict[str, Any]:
    return {
        "name": contact.name,
        "email": contact.email,
        "phone": contact.phone,
        "company": contact.company,
        "city": contact.city,
    }


@calendar.tool(
    "list_events",
    "Events in the user's calendar between two dates (inclusive); defaults to the next 7 days.",
    params={"start_date": DATE, "end_date": DATE},
    output=obj(
        {"start_date": string(), "end_date": string(), "events": array(_EVENT)}, ("events",)
    ),
)
def _list_events(world: World, args: dict[str, Any]) -> dict[str, Any]:
    start = parse_day(world, args.get("start_date"), horizon=(-30, 60))
    end = (
        parse_day(world, args.get("end_date"), horizon=(-30, 60))
        if "end_date" in args
        else start + timedelta(days=7)
    )
    events = [
        _event(e) for e in world.events if start.isoformat() <= e.start[:10] <= end.isoformat()
    ]
    return {"start_date": start.isoformat(), "end_date": end.isoformat(), "events": events}


@calendar.tool(
    "get_event",
    "Details of one calendar event by id.",
    params={"event_id": EVENT_ID},
    required=("event_id",),
    output=_EVENT,
)
def _get_event(world: World, args: dict[str, Any]) -> dict[str, Any]:
    for event in world.events:
        if event.event_id == args["event_id"]:
            return _event(event)
    raise ToolEnvNotFoundError(f"no event with id {args['event_id']!r}")


@calendar.tool(
    "create_event",
    "Create a calendar event and invite attendees by e-mail.",
    params={
        "title": string("Event title.", min_length=1),
        "start": DATETIME,
        "duration_minutes": integer("Length in minutes.", minimum=5, maximum=24 * 60, default=60),
        "attendees": {
            "type": "array",
            "items": EMAIL_ADDRESS,
            "description": "Attendee e-mail addresses.",
        },
        "location": string("Where it takes place."),
    },
    required=("title", "start"),
    output=obj({"status": string(enum=("created",)), "event": _EVENT}, ("status", "event")),
    read_only=False,
    destructive=True,
)
def _create_event(world: World, args: dict[str, Any]) -> dict[str, Any]:
    start = datetime.strptime(args["start"], "%Y-%m-%dT%H:%M")
    end = start + timedelta(minutes=args.get("duration_minutes", 60))
    event = Event(
        stable_id("evt_", args, length=6).lower(),
        args["title"],
        args["start"],
        end.strftime("%Y-%m-%dT%H:%M"),
        args.get("location", ""),
        tuple(args.get("attendees", ())),
    )
    return {"status": "created", "event": _event(event)}


@calendar.tool(
    "delete_event",
    "Delete an event from the user's calendar.",
    params={
        "event_id": EVENT_ID,
        "notify_attendees": boolean("Send cancellation notices.", default=True),
    },
    required=("event_id",),
    output=obj(
        {"event_id": string(), "status": string(enum=("deleted",)), "notified": array(string())},
        ("event_id", "status"),
    ),
    read_only=False,
    destructive=True,
)
def _delete_event(world: World, args: dict[str, Any]) -> dict[str, Any]:
    event = _get_event(world, {"event_id": args["event_id"]})
    notified = event["attendees"] if args.get("notify_attendees", True) else []
    return {"event_id": event["event_id"], "status": "deleted", "notified": notified}


@calendar.tool(
    "find_free_slots",
    "Free time slots of at least the given length on a day, between 09:00 and 18:00.",
    params={
        "date": DATE,
        "duration_minutes": integer(
            "Needed length in minutes.", minimum=15, maximum=540, default=60
        ),
    },
    required=("date",),
    output=obj(
        {
            "date": string(),
            "slots": array(obj({"start": string(), "end": string()}, ("start", "end"))),
        },
        ("date", "slots"),
    ),
)
def _find_free_slots(world: World, args: dict[str, Any]) -> dict[str, Any]:
    day = parse_day(world, args["date"], horizon=(0, 60))
    cursor = datetime.combine(day, datetime.min.time()).replace(hour=9)
    close = cursor.replace(hour=18)
    need = timedelta(minutes=args.get("duration_minutes", 60))
    slots = []
    for event in (e for e in world.events if e.start[:10] == day.isoformat()):
        start, end = datetime.fromisoformat(event.start), datetime.fromisoformat(event.end)
        if start - cursor >= need:
            slots.append((cursor, start))
        cursor = max(cursor, end)
    if close - cursor >= need:
        slots.append((cursor, close))
    return {
        "date": day.isoformat(),
        "slots": [{"start": a.strftime("%H:%M"), "end": b.strftime("%H:%M")} for a, b in slots],
    }


@email.tool(
    "list_emails",
    "Messages in a mailbox folder, newest first (headers only).",
    params={
        "folder": string("Mailbox folder.", enum=("inbox", "archive"), default="inbox"),
        "unread_only": boolean("Only unread messages.", default=False),
        "limit": integer("Maximum number of messages.", minimum=1, maximum=50, default=10),
    },
    output=obj({"folder": string(), "messages": array(_HEADER)}, ("folder", "messages")),
)
def _list_emails(world: World, args: dict[str, Any]) -> dict[str, Any]:
    folder = args.get("folder", "inbox")
    mails = [
        m for m in world.emails if m.folder == folder and (m.unread or not args.get("unread_only"))
    ]
    return {"folder": folder, "messages": [_header(m) for m in mails[: args.get("limit", 10)]]}


@email.tool(
    "read_email",
    "Full text of one e-mail message by id.",
    params={"message_id": string("Message id such as 'msg_0004'.", pattern=r"^msg_[0-9]{4}$")},
    required=("message_id",),
    output=obj(
        {
            "message_id": string(),
            "from": string(),
            "from_name": string(),
            "to": string(),
            "subject": string(),
            "received_at": string(),
            "unread": boolean(),
            "body": string(),
        },
        ("message_id", "from", "subject", "body"),
    ),
)
def _read_email(world: World, args: dict[str, Any]) -> dict[str, Any]:
    for mail in world.emails:
        if mail.message_id == args["message_id"]:
            return {**_header(mail), "to": world.user.email, "body": mail.body}
    raise ToolEnvNotFoundError(f"no message with id {args['message_id']!r}")


@email.tool(
    "search_emails",
    "Full-text search over subjects, bodies and senders of all e-mail messages.",
    params={
        "query": string("Words to look for.", min_length=1),
        "limit": integer("Maximum number of messages.", minimum=1, maximum=50, default=10),
    },
    required=("query",),
    output=obj({"query": string(), "messages": array(_HEADER)}, ("query", "messages")),
)
def _search_emails(world: World, args: dict[str, Any]) -> dict[str, Any]:
    words = normalize_name(args["query"]).split()
    hits = [
        m
        for m in world.emails
        if all(
            w in normalize_name(f"{m.subject} {m.body} {m.sender_name} {m.sender}") for w in words
        )
    ]
    return {"query": args["query"], "messages": [_header(m) for m in hits[: args.get("limit", 10)]]}


@email.tool(
    "send_email",
    "Send an e-mail from the user's account.",
    params={
        "to": array(EMAIL_ADDRESS, "Recipients.", min_items=1),
        "subject": string("Subject line.", min_length=1),
        "body": string("Plain-text body."),
        "cc": array(EMAIL_ADDRESS, "Carbon-copy recipients."),
    },
    required=("to", "subject", "body"),
    output=obj(
        {
            "message_id": string(),
            "status": string(enum=("sent",)),
            "to": array(string()),
            "sent_at": string(),
        },
        ("message_id", "status"),
    ),
    read_only=False,
    destructive=True,
)
def _send_email(world: World, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "message_id": stable_id("out_", args, length=8).lower(),
        "status": "sent",
        "to": list(args["to"]),
        "sent_at": world.now_utc.strftime("%Y-%m-%dT%H:%MZ"),
    }


@email.tool(
    "find_contact",
    "Look up people in the user's address book by (part of) their name or company.",
    params={"name": string("Name, first name, surname or company.", min_length=1)},
    required=("name",),
    output=obj({"query": string(), "contacts": array(_CONTACT)}, ("query", "contacts")),
)
def _find_contact(world: World, args: dict[str, Any]) -> dict[str, Any]:
    key = normalize_name(args["name"])
    hits = [c for c in world.contacts if key in normalize_name(f"{c.name} {c.company}")]
    return {"query": args["name"], "contacts": [_contact(c) for c in hits]}

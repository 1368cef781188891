"""How catalog tasks read: requests phrased from operation descriptions and parameter meanings.

A catalog task's query never names a tool or an argument key. Each operation becomes an action
from its description's first clause ("Gets the template" → "get the template"; a bare noun phrase
→ "look up the music export tracks"); each argument a phrase from its meaning (its description
when that is a short noun phrase, else its humanized name: ``projectsId`` → "project ID"); each
fact a phrase from its field path (``maxDiscountAmount.currency`` → "currency of the max discount
amount"); the provider a service name (``aws_logs`` → "AWS Logs"). Sentences come from several
frames per shape, and the frames of the test splits are not those of ``train`` and ``dev``
(:func:`frames_for`), so a test query's wording is never a training one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from paraagent_runtime import TEST_SPLITS
from paraagent_runtime.documents import split_identifier

from .records import ToolRecord

__all__ = [
    "FRAMES",
    "action",
    "argument_phrases",
    "field_phrase",
    "frames_for",
    "join_and",
    "service",
]

_TAGS = re.compile(r"<[^>]+>|\[([^\]]*)\]\([^)]*\)|[`*_#]{1,3}(?=\w)|(?<=\w)[`*_]{1,3}")
_CLAUSE = re.compile(
    r"(?<=[A-Za-z0-9)])[.!?;:](?:\s|$)|\s[-–—]\s|\s\("
    r"|\s(?=(?:May|This|Note|Returns?|If|See|For|Use|Requires|Only|When|You)\s)"
)
_LABEL = re.compile(r"^(?:(?:required|optional|deprecated|output only)[.:]\s*)+", re.IGNORECASE)
_ARTICLES = frozenset(
    {
        "a",
        "an",
        "the",
        "all",
        "one",
        "information",
        "details",
        "metadata",
        "specified",
        "your",
        "its",
        "multiple",
        "new",
        "list",
        "data",
        "existing",
        "current",
        "given",
        "available",
        "specific",
    }
)
_ACRONYMS = frozenset(
    {
        "id",
        "ids",
        "api",
        "arn",
        "url",
        "uri",
        "ip",
        "dns",
        "sql",
        "aws",
        "gcp",
        "vpc",
        "ssl",
        "tls",
        "http",
        "https",
        "json",
        "xml",
        "csv",
        "sms",
        "iam",
        "kms",
        "ec2",
        "s3",
        "sqs",
        "sns",
        "ui",
        "os",
        "cpu",
        "gpu",
        "ml",
        "ai",
        "bbc",
        "uk",
        "us",
        "eu",
        "iot",
        "sdk",
        "ttl",
        "utc",
    }
)
_BASE_VERBS = frozenset(
    {
        "get",
        "list",
        "create",
        "delete",
        "update",
        "retrieve",
        "fetch",
        "find",
        "search",
        "add",
        "remove",
        "describe",
        "check",
        "send",
        "start",
        "stop",
        "cancel",
        "set",
        "put",
        "post",
        "patch",
        "return",
        "lookup",
        "query",
        "show",
        "count",
        "compute",
        "calculate",
        "convert",
        "generate",
        "validate",
        "verify",
        "download",
        "upload",
        "export",
        "import",
        "insert",
        "modify",
        "enable",
        "disable",
        "register",
        "deregister",
        "attach",
        "detach",
        "associate",
        "run",
        "execute",
        "read",
        "write",
        "track",
        "translate",
        "analyze",
        "analyse",
        "estimate",
        "resolve",
        "publish",
        "subscribe",
        "fetches",
        "tag",
        "untag",
        "move",
        "copy",
        "rename",
        "restore",
        "reset",
        "approve",
        "reject",
        "assign",
        "schedule",
        "book",
        "invite",
        "share",
        "turn",
        "deactivate",
        "activate",
        "initiate",
        "deploy",
        "provide",
        "browse",
    }
)
_OPERATION = re.compile(
    r"^(?:the\s+)?(?!this\b)\S+ (?:operation|action|API|method|endpoint|call) (\w+s) ",
    re.IGNORECASE,
)
"""``DeleteTable operation deletes a table`` → ``delete a table``."""
_NOT_ACTIONS = frozenset(
    {
        "this",
        "you",
        "we",
        "it",
        "note",
        "important",
        "use",
        "if",
        "when",
        "for",
        "in",
        "to",
        "deprecated",
        "warning",
        "only",
        "see",
        "just",
        "please",
        "simply",
        "help",
        "helps",
    }
)
"""First words of descriptions that talk about the operation instead of saying what it does."""
_THIRD_PERSON = {"returns": "get", "does": "do", "has": "have", "is": "check whether it is"}
_GENERIC_LEAVES = frozenset(
    {
        "name",
        "id",
        "total",
        "status",
        "value",
        "type",
        "count",
        "code",
        "currency",
        "amount",
        "state",
        "title",
        "description",
        "kind",
        "size",
        "unit",
        "label",
        "number",
        "version",
        "date",
        "time",
    }
)


def _words(identifier: str) -> list[str]:
    words = [word for word in split_identifier(identifier) if word]
    return [word.upper() if word.lower() in _ACRONYMS else word.lower() for word in words]


def _humanize(identifier: str) -> str:
    return " ".join(_words(identifier))


def _clean(text: str) -> str:
    text = _TAGS.sub(lambda match: match.group(1) or "", text or "")
    return " ".join(text.split())


def service(provider: str) -> str:
    """A service name people would write: ``aws_logs`` → "AWS Logs", ``spotify_com`` → "Spotify"."""
    name = re.sub(r"^rapidapi_", "", provider)
    name = re.sub(r"^azure_com_arm_", "azure_", name)
    name = re.sub(r"_(com|co_uk|io|org|net|dev|app|ai)$", "", name)
    words = [word for word in re.split(r"[_\-.]+", name) if word]
    return " ".join(
        w.upper() if w.lower() in _ACRONYMS or len(w) <= 2 else w.capitalize() for w in words
    )


def _first_clause(description: str) -> str:
    text = _LABEL.sub("", _clean(description))
    clause = _CLAUSE.split(text, maxsplit=1)[0].strip().rstrip(".,;:") if text else ""
    words = clause.split()
    if len(words) > 16:
        clause = " ".join(words[:16])
        clause = re.sub(r"\s+(a|an|the|of|for|to|in|on|with|and|or|by|from)$", "", clause)
    return clause


def action(record: ToolRecord) -> str:
    """What the operation does, as an instruction without its name: "get the template"."""
    clause = _OPERATION.sub(
        lambda m: f"{_stem(m.group(1).lower())} ", _first_clause(record.description)
    )
    if not clause or len(clause.split()) < 2 or clause.split()[0].lower() in _NOT_ACTIONS:
        words = _words(record.name.split("/")[-1])
        if len(words) > 1 and words[-1] in _BASE_VERBS and words[0] not in _BASE_VERBS:
            words = [words[-1], *words[:-1]]
        clause = " ".join(words)
    first, _, rest = clause.partition(" ")
    word = first.lower().rstrip(",")
    following = rest.split(" ", 1)[0].lower()
    if word in _THIRD_PERSON:
        return f"{_THIRD_PERSON[word]} {rest}".strip()
    if (
        word in _BASE_VERBS
        or _stem(word) in _BASE_VERBS
        or (word.endswith("s") and not word.endswith("ss") and following in _ARTICLES)
    ):
        verb = word if word in _BASE_VERBS else _stem(word)
        rest = re.sub(r"^and (\w+?)(e?s)\b", lambda m: f"and {_stem(m.group(0)[4:])}", rest)
        return f"{verb} {rest}".strip()
    noun = re.sub(r"^(?:the|a|an)\s+", "", clause, flags=re.IGNORECASE)
    return "look up the " + " ".join(w if w.isupper() else w.lower() for w in noun.split())


def _stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


_NOT_NOUNS = frozenset(
    {
        "is",
        "are",
        "be",
        "possible",
        "values",
        "value",
        "e.g",
        "example",
        "default",
        "if",
        "when",
        "must",
        "should",
        "can",
        "will",
    }
)
"""Words that make a description a sentence about the argument rather than its name."""


def _argument_noun(name: str, schema: dict[str, Any]) -> str:
    """The meaning of an argument: a short noun-phrase description, else its humanized name."""
    described = _first_clause(str(schema.get("description") or ""))
    words = described.split()
    if 1 <= len(words) <= 5 and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    if (
        1 <= len(words) <= 4
        and words[0].lower() not in _BASE_VERBS
        and not words[0].endswith("s")
        and not {word.lower() for word in words} & _NOT_NOUNS
    ):
        return " ".join(words).lower() if not any(w.isupper() for w in words) else " ".join(words)
    return _humanize(name.lstrip("$"))


def _render_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return join_and([_render_value(item) for item in value]) if value else ""
    if isinstance(value, dict):
        return ""
    text = str(value)
    return f'"{text}"' if " " in text and not text[:1].isupper() else text


def argument_phrases(arguments: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Each argument as "<meaning> <value>" (empty objects and lists are left to the reader)."""
    properties = schema.get("properties") or {}
    phrases = []
    for name, value in arguments.items():
        rendered = _render_value(value)
        if not rendered:
            continue
        sub = properties.get(name)
        if not any(char.isalpha() for char in name):
            continue
        phrases.append(f"{_argument_noun(name, sub if isinstance(sub, dict) else {})} {rendered}")
    return phrases


def field_phrase(path: str) -> str:
    """An output field path as a phrase: ``status.statusCode`` → "status code".

    A generic leaf takes its parent: ``playlists.total`` → "total of the playlists".
    """
    parts = [part for part in path.split(".") if not part.isdigit() and part != "_list_length"]
    if not parts:
        return "result"
    leaf = _humanize(parts[-1])
    if len(parts) > 1 and leaf.lower() in _GENERIC_LEAVES:
        parent = _humanize(parts[-2])
        if parent.lower() not in leaf.lower():
            return f"{leaf} of the {parent}"
    return leaf


def join_and(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [item for item in items if item]
    if not items:
        return ""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


FRAMES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # (train and dev frames, test frames); slots: {service} {act} {args} {facts}
    "single": (
        (
            "On {service}, {act}{args}. What is the {facts}?",
            "Could you {act} in {service}{args} and tell me the {facts}?",
            "{Service}: {act}{args}. I need the {facts}.",
            "I'm working in {service} and need to {act}{args}. What's the {facts}?",
        ),
        (
            "Please {act} on {service}{args}, then let me know the {facts}.",
            "Quick one for {service}: {act}{args} — what's the {facts}?",
            "Using {service}, {act}{args}; I'd like to know the {facts}.",
        ),
    ),
    "parallel": (
        (
            "In {service} I need a few things at once: {acts}. Tell me the {facts}.",
            "For {service}, please {acts}. What are the {facts}?",
            "Two things on {service}: {acts}. I'm after the {facts}.",
        ),
        (
            "Over on {service}, {acts}, and report the {facts}.",
            "Can you handle this in {service}: {acts}? I want the {facts}.",
        ),
    ),
    "chain": (
        (
            "{Head}. With the {link} from that, {next}. What's the {facts}?",
            "I need to {head}; then use its {link} to {next}. Tell me the {facts}.",
            "Start with this: {head}. Then take the {link} it gives to {next}. What is the "
            "{facts}?",
        ),
        (
            "First {head}, and with the {link} you get, {next} — I'd like the {facts}.",
            "Could you {head} and, using the {link} from it, {next}? Let me know the {facts}.",
        ),
    ),
}
"""Sentence frames per task shape: the first tuple for ``train``/``dev``, the second for tests."""


def frames_for(shape: str, split: str) -> tuple[str, ...]:
    """The frames a task of ``shape`` in ``split`` may use (test splits get their own)."""
    seen, test = FRAMES[shape]
    return test if split in TEST_SPLITS else seen


def sentence(frame: str, **slots: str) -> str:
    """Fill a frame; ``{Name}`` slots take the value with its first letter upper-cased."""
    capitalized = {key.capitalize(): value[:1].upper() + value[1:] for key, value in slots.items()}
    text = frame.format(**slots, **capitalized)
    return re.sub(r"\s+([,.?;])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


def choose(rng: random.Random, options: Sequence[str]) -> str:
    """One of ``options``."""
    return options[rng.randrange(len(options))]

"""A cheap rule-based splitter of a request into its needs: sentences, clauses, enumerations.

"Get a QR code for my blog URL and also find phishing statistics" asks for two tools; searching it
whole lets one sub-request take every slot. :func:`decompose` splits at sentence ends, at
discourse markers ("also", "additionally", "then", "finally", ...), at "and" before a new request
("and can you", "and get"), and expands enumerations ("Messi's clubs, managers and referees"
becomes one need per item, each with the words before the list). Pure string work, no model, a
few microseconds per query; works on any language that uses these separators, and anything it
cannot split stays one need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_NEEDS", "Need", "decompose"]

MAX_NEEDS = 6
"""At most this many needs per query (the rest of the text joins the last one)."""

_SENTENCE_END = re.compile(r"(?:^|\s+)\(?\d{1,2}[.)]\s+|(?<=[.!?;])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_REQUEST_VERBS = (
    "can|could|would|will|please|also|then|get|find|show|tell|give|provide|fetch|retrieve|"
    "search|calculate|check|send|create|list|recommend|suggest|convert|translate|book|look|"
    "generate|download|analy[sz]e|compute|update|save|write|post|add|delete|schedule|track|"
    "obtain|gather|determine|perform|make|set|share|let|help|i|i'd|we|what|how|which|where|when"
)
_CLAUSE_BREAK = re.compile(
    r",\s*(?:and\s+)?(?:then|also|additionally|furthermore|moreover|after that|afterwards|"
    r"besides|finally|lastly|next|plus)\b,?\s*"
    r"|\s+and\s+(?:then|also|additionally|finally|lastly|after that)\b,?\s*"
    r"|\s+(?:also|additionally|furthermore|moreover)\b,?\s*"
    rf"|,?\s+and\s+(?=(?:{_REQUEST_VERBS})\b)"
    r"|,?\s+as well as\s+",
    re.IGNORECASE,
)
_OPENERS = re.compile(
    r"^(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|also|additionally|furthermore|moreover|then|"
    r"finally|lastly|next|plus|and|but|so)\b,?\s*",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_LIST_TAIL = re.compile(r",?\s+(?:and|or)\s+", re.IGNORECASE)
_MIN_WORDS = 2
_FILLER = frozenset(
    """a an the i me my we us our you your it this that these those is are be am do does did can
    could would will should please kindly help assist assistance with some any information info
    details data following tasks task thing things something anything everything thank thanks
    want like need needs to for of in on and or also me about retrieve get provide find more
    know i'd i'm let's let just few some specific""".split()
)
"""Words that alone do not name a need ("Can you help me with that?", "Thank you!")."""
_MAX_ITEM_WORDS = 4
_SITUATION = re.compile(r"^(?:i'm|i am|i've|i have|we're|we are|we've|we have|my|our)\b", re.I)
_REQUEST_CUE = re.compile(
    r"\b(?:can|could|would|please|need|needs|want|wants|like|looking|interested|curious|"
    r"wondering|know|find|get|provide|fetch|retrieve|show|tell|give|help|search|searching|"
    r"check|recommend|suggest)\b",
    re.IGNORECASE,
)
"""A part that only sets the scene ("I'm planning a family trip", "My friend loves puzzles.")
names no tool; one with a request cue ("I'm looking for ...", "we need ...") is a need."""


@dataclass(frozen=True)
class Need:
    """One need of a request: the text to search for and where it came from.

    Attributes:
        text: The search text of this need (for an enumerated item, the words before the list
            plus the item).
        span: ``(start, end)`` character offsets of the part of the original query it answers.
    """

    text: str
    span: tuple[int, int]


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _pieces(text: str, pattern: re.Pattern[str], offset: int) -> list[tuple[str, int]]:
    """``text`` cut at every match of ``pattern``: ``(piece, start offset)`` pairs, empties out."""
    out: list[tuple[str, int]] = []
    start = 0
    for match in pattern.finditer(text):
        out.append((text[start : match.start()], offset + start))
        start = match.end()
    out.append((text[start:], offset + start))
    return [(piece, at) for piece, at in out if piece.strip()]


def _enumeration(clause: str, at: int) -> list[Need]:
    """One need per item of a comma list ``A, B(,) and C`` in ``clause``; ``[]`` when none."""
    if "," not in clause:
        return []
    tail = list(_LIST_TAIL.finditer(clause))
    if not tail:
        return []
    last = tail[-1]
    before, after = clause[: last.start()], clause[last.end() :]
    items = [item.strip() for item in before.split(",")]
    if len(items) < 2:
        return []
    middle = items[1:]
    width = max(_words(item) for item in middle)
    if width > _MAX_ITEM_WORDS or any(_words(item) == 0 for item in middle):
        return []
    head_words = items[0].split()
    if len(head_words) <= width:
        return []
    head = " ".join(head_words[:-width])
    first = " ".join(head_words[-width:])
    final = " ".join(re.split(r"[.?!]", after.strip(), maxsplit=1)[0].split()[: width + 1])
    texts = [first, *middle, final]
    if not final or any(_words(text) == 0 for text in texts):
        return []
    span = (at, at + len(clause.rstrip()))
    return [Need(f"{head} {item}", span) for item in texts]


def _is_filler(text: str) -> bool:
    """Whether ``text`` names no need: only filler words, or only the user's situation."""
    if _SITUATION.match(text) and not _REQUEST_CUE.search(text):
        return True
    return all(word.lower() in _FILLER for word in _WORD.findall(text))


def _clean(piece: str) -> str:
    return _OPENERS.sub("", " ".join(piece.split())).strip(" ,;:")


def decompose(query: str, *, max_needs: int = MAX_NEEDS) -> list[Need]:
    """Split ``query`` into its needs, in the order they appear.

    A part with fewer than two words joins the need before it; a part made only of filler words
    ("Can you help me with that?") or only of the user's situation ("I'm planning a trip") is
    dropped (a query made only of such parts stays one need). An enumeration is expanded only
    when its items are short (at most four words). A query that does not split returns one need.

    Args:
        query: The user request.
        max_needs: Cap on the number of needs; parts past it are merged into the last need.

    Returns:
        At least one need (none for an empty query).

    Example:
        >>> [n.text for n in decompose("Get the weather in Paris. Also convert 10 USD to EUR.")]
        ['Get the weather in Paris.', 'convert 10 USD to EUR.']
    """
    needs: list[Need] = []
    for sentence, sentence_at in _pieces(query, _SENTENCE_END, 0):
        for clause, at in _pieces(sentence, _CLAUSE_BREAK, sentence_at):
            text = _clean(clause)
            if not text or _is_filler(text):
                continue
            end = at + len(clause.rstrip())
            if _words(text) < _MIN_WORDS and needs:
                previous = needs[-1]
                needs[-1] = Need(f"{previous.text} {text}", (previous.span[0], end))
                continue
            needs.extend(_enumeration(text, at) or [Need(text, (at, end))])
    if not needs and query.strip():
        needs = [Need(" ".join(query.split()), (0, len(query.rstrip())))]
    if len(needs) > max_needs:
        rest = needs[max_needs - 1 :]
        merged = Need(" ".join(n.text for n in rest), (rest[0].span[0], rest[-1].span[1]))
        needs = [*needs[: max_needs - 1], merged]
    return needs

"""Fact-based answer checking: does a final answer state every gold fact?

Numbers match with a tolerance and in any common formatting (``21.5``, ``21.50``, ``"21.5°C"``,
``1,234.56``, ``21,5``); a value rounded to fewer decimals than the gold one also matches
(``"22 °C"`` for 21.7, within half a unit of the last written digit). Strings match
case-insensitively, ignoring accents and punctuation, on word boundaries; an ISO 8601 date-time
in the answer (``2025-07-16T11:00``, as tools return it) states both its date and its time.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

from pydantic import BaseModel

from .tasks import AnswerFact, Task

__all__ = ["DEFAULT_TOLERANCE", "CheckResult", "check_answer", "extract_numbers", "normalize_name"]

DEFAULT_TOLERANCE = 0.01
"""Absolute tolerance for numeric facts that set none."""
_ISO_DATE_TIME_SEPARATOR = re.compile(r"(?<=\d)T(?=\d)")
_NUMBER = re.compile(r"(?<![\w.\-−])(?:[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-−]?\d+(?:[.,]\d+)?)")


class CheckResult(BaseModel):
    """The verdict on one answer.

    Attributes:
        success: Every fact was found.
        matched: Labels (or values) of facts found.
        missing: Labels (or values) of facts not found.
        score: Fraction of facts found (1.0 when the task has no facts).
    """

    success: bool
    matched: list[str]
    missing: list[str]
    score: float


def normalize_name(text: str) -> str:
    """Casefold, strip accents and punctuation, collapse spaces.

    ``"São  Paulo"`` → ``"sao paulo"``.
    """
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    cleaned = "".join(ch if ch.isalnum() else " " for ch in plain)
    return " ".join(cleaned.split())


def extract_numbers(text: str) -> list[tuple[float, int]]:
    """Every number in ``text`` as ``(value, decimals written)``.

    Thousands separators understood.
    """
    out = []
    for match in _NUMBER.finditer(text):
        raw = match.group().replace("−", "-")
        if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", raw):
            raw = raw.replace(",", "")
        else:
            raw = raw.replace(",", ".")
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        out.append((float(raw), decimals))
    return out


def _number_found(fact: AnswerFact, numbers: list[tuple[float, int]]) -> bool:
    expected = float(fact.value)
    tolerance = DEFAULT_TOLERANCE if fact.tolerance is None else fact.tolerance
    for value, decimals in numbers:
        if abs(value - expected) <= tolerance + 1e-9:
            return True
        if abs(expected) >= 1 and value in _roundings(expected, decimals):
            return True
    return False


def _roundings(value: float, decimals: int) -> set[float]:
    """``value`` rounded to ``decimals`` places, half-up and half-even (both are common)."""
    step = Decimal(1).scaleb(-decimals)
    exact = Decimal(str(value))
    return {float(exact.quantize(step, rounding=mode)) for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN)}


def _string_found(expected: str, answer: str) -> bool:
    needle, haystack = (
        normalize_name(_ISO_DATE_TIME_SEPARATOR.sub(" ", text)) for text in (expected, answer)
    )
    return bool(needle) and f" {needle} " in f" {haystack} "


def check_answer(task: Task, answer: str) -> CheckResult:
    """Check that ``answer`` states every answer fact of ``task``."""
    numbers = extract_numbers(answer)
    matched, missing = [], []
    for fact in task.facts:
        if isinstance(fact.value, int | float):
            found = _number_found(fact, numbers)
        else:
            found = _string_found(fact.value, answer)
        (matched if found else missing).append(fact.label or str(fact.value))
    total = len(task.facts)
    return CheckResult(
        success=not missing,
        matched=matched,
        missing=missing,
        score=len(matched) / total if total else 1.0,
    )

"""Fact matching: number formats and tolerance, case- and accent-insensitive strings."""

from __future__ import annotations

import pytest

from paraagent_runtime.checker import check_answer, extract_numbers
from paraagent_runtime.tasks import AnswerFact, Task


def _task(*facts: AnswerFact) -> Task:
    return Task(
        id="t",
        query="q",
        group="G1",
        family="f",
        seed=0,
        calls=[],
        facts=list(facts),
        gold_answer="",
    )


@pytest.mark.parametrize(
    "answer", ["21.5", "It is 21.50 degrees", "21.5°C", "about 21,5 °C", "temp: 21.5C"]
)
def test_number_formats_match(answer: str) -> None:
    assert check_answer(_task(AnswerFact(value=21.5, label="t")), answer).success


@pytest.mark.parametrize("answer", ["22.5", "21", "-21.5", "2021-05-01", "no number"])
def test_wrong_numbers_do_not_match(answer: str) -> None:
    assert not check_answer(_task(AnswerFact(value=21.5, label="t")), answer).success


def test_thousands_separators_rounding_and_tolerance() -> None:
    assert check_answer(_task(AnswerFact(value=1234.56)), "Total: 1,234.56 EUR").success
    assert check_answer(_task(AnswerFact(value=1234.56)), "roughly 1235 EUR").success
    assert check_answer(_task(AnswerFact(value=21.5)), "22 degrees").success
    assert not check_answer(_task(AnswerFact(value=1234.56)), "roughly 1240 EUR").success
    assert check_answer(_task(AnswerFact(value=100.0, tolerance=5.0)), "103").success
    assert extract_numbers("−4.5 and 1,000,000") == [(-4.5, 1), (1000000.0, 0)]


def test_strings_match_case_accent_and_word_insensitively() -> None:
    task = _task(AnswerFact(value="São Paulo", label="city"), AnswerFact(value="rain", label="sky"))
    result = check_answer(task, "In SAO PAULO expect Rain.")
    assert result.success and result.matched == ["city", "sky"]
    partial = check_answer(task, "In Sao Paulo it is raining.")
    assert not partial.success and partial.missing == ["sky"] and partial.score == 0.5


def test_an_iso_date_time_states_its_date_and_its_time() -> None:
    task = _task(AnswerFact(value="11:00", label="time"), AnswerFact(value="2025-07-16"))
    assert check_answer(task, "In Oslo it is 2025-07-16T11:00 now.").success
    assert check_answer(task, "It is 2025-07-16 11:00.").success
    # Only a T between digits separates: a word or another time still does not match.
    assert not check_answer(task, "It is 2025-07-16T111:00, or UTC11:00.").success
    full = _task(AnswerFact(value="2025-04-12T10:00", label="start"))
    assert check_answer(full, "starts 2025-04-12T10:00").success
    assert check_answer(full, "starts 2025-04-12 10:00").success


def test_task_without_facts_scores_one() -> None:
    assert check_answer(_task(), "anything").score == 1.0

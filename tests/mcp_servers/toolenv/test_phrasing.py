"""Phrasing pools: test wording is never train wording; dates and amounts read as people write."""

from __future__ import annotations

import random
import re
import string
from datetime import date

from mcp_servers.toolenv.phrasing import PHRASINGS, human_date, money, nights_words
from mcp_servers.toolenv.tasks import ALL_FAMILIES, FAMILIES, builtin_tasks, generate_tasks


def _slots(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _runs(template: str, length: int = 5) -> set[tuple[str, ...]]:
    """Runs of ``length`` words, lower-cased, every slot read as the same word."""
    words: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(template):
        words += re.findall(r"[a-z0-9'-]+", literal.lower())
        words += ["{}"] if name else []
    return {tuple(words[i : i + length]) for i in range(len(words) - length + 1)}


def _all_runs(templates: tuple[str, ...]) -> set[tuple[str, ...]]:
    return set().union(*map(_runs, templates))


def test_every_family_has_phrasings_and_no_two_pools_share_a_template() -> None:
    assert set(PHRASINGS) == set(ALL_FAMILIES)
    for family, phrasings in PHRASINGS.items():
        pools = (phrasings.train, phrasings.paraphrases, phrasings.dev, phrasings.test)
        assert len(phrasings.test) >= 2, family
        assert sum(map(len, pools)) == len(set().union(*pools)), family
        if family in FAMILIES:
            assert phrasings.train and len(phrasings.paraphrases) >= 3, family
            assert len(phrasings.dev) >= 2, family
            assert phrasings.pool("test-seen") == phrasings.test
            assert phrasings.pool("dev") == phrasings.dev
            assert phrasings.pool("train") == phrasings.train + phrasings.paraphrases
            assert phrasings.pool("builtin") == phrasings.train
        else:
            assert phrasings.pool("test-unseen-tools") == phrasings.test
            assert phrasings.pool("dev") == phrasings.test


def test_paraphrase_and_dev_wording_keep_clear_of_the_test_wording() -> None:
    for family, phrasings in PHRASINGS.items():
        test_runs = _all_runs(phrasings.test)
        training_runs = _all_runs(phrasings.train + phrasings.paraphrases)
        slots = set().union(*map(_slots, phrasings.train + phrasings.test))
        for template in phrasings.paraphrases + phrasings.dev:
            assert not _runs(template) & test_runs, (family, template)
            assert _slots(template) <= slots, (family, template)
        for template in phrasings.dev:
            assert not _runs(template) & training_runs, (family, template)


def test_dev_queries_use_dev_wording_and_builtin_ones_the_first_wording() -> None:
    for task in generate_tasks(24, seed=3, split="dev"):
        assert any(_matches(t, task.query) for t in PHRASINGS[task.family].dev), task.query
    for task in builtin_tasks():
        assert any(_matches(t, task.query) for t in PHRASINGS[task.family].train), task.query


def _matches(template: str, query: str) -> bool:
    pattern = "".join(
        re.escape(literal) + ("(.+)" if name else "")
        for literal, name, _, _ in string.Formatter().parse(template)
    )
    return re.fullmatch(pattern, query, flags=re.DOTALL) is not None


def test_test_pools_vary_slot_order_and_register() -> None:
    hidden = ("flight_packing", "match_budget", "contact_local_time")
    for family in hidden:
        templates = PHRASINGS[family].test + PHRASINGS[family].train
        assert len(templates) >= 6 and any(t.rstrip().endswith("?") for t in templates)
        assert any(not t.rstrip().endswith("?") for t in templates), family
    starts = {t.split("{", 1)[0] for t in PHRASINGS["stock_in_currency"].test}
    assert "" in starts and len(starts) >= 3  # some open on a slot, some on words
    assert all(_slots(t) for t in PHRASINGS["hotel_compare"].test)


def test_dates_amounts_and_stays_read_as_people_write_them() -> None:
    rng = random.Random(0)
    day = date(2025, 6, 1)
    written = {human_date(day, rng) for _ in range(60)}
    assert {"June 1st", "Sunday 1 June", "Sun 1 Jun", "the 1st of June"} <= written
    assert human_date(date(2025, 6, 12), random.Random(3), year=True).endswith("2025")
    assert all(
        "12th" in human_date(date(2025, 6, 12), random.Random(i))
        or "12 " in human_date(date(2025, 6, 12), random.Random(i))
        for i in range(10)
    )
    assert {money(250.0, "USD", random.Random(i)) for i in range(40)} >= {"$250", "250 USD"}
    assert {nights_words(3, random.Random(i)) for i in range(20)} == {"3 nights", "three nights"}
    assert nights_words(1, random.Random(1)) in {"1 night", "one night"}

"""Phrasing pools: test wording is never train wording; dates and amounts read as people write."""

from __future__ import annotations

import random
import string
from datetime import date

from mcp_servers.toolenv.phrasing import PHRASINGS, human_date, money, nights_words
from mcp_servers.toolenv.tasks import ALL_FAMILIES, FAMILIES


def _slots(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_family_has_phrasings_and_test_never_reuses_train_wording() -> None:
    assert set(PHRASINGS) == set(ALL_FAMILIES)
    for family, phrasings in PHRASINGS.items():
        assert len(phrasings.test) >= 2, family
        assert not set(phrasings.test) & set(phrasings.train), family
        if family in FAMILIES:
            assert phrasings.train, family
            assert phrasings.pool("test-seen") == phrasings.test
            assert phrasings.pool("train") == phrasings.pool("dev") == phrasings.train
        else:
            assert phrasings.pool("test-unseen-tools") == phrasings.test


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

"""The retrieval query sets: fixed disjoint parts over the shared data, test only on request."""

from __future__ import annotations

from collections import Counter

import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.retrieval.querysets import (
    default_data_dir,
    load_query_sets,
    query_part,
)
from paraagent_runtime.retrieval.stabletoolbench import RetrievalQuery

pytestmark = pytest.mark.skipif(
    not (default_data_dir() / "seal-tools").is_dir(), reason="shared data folder not present"
)


def _counts(parts: tuple[str, ...]) -> dict[tuple[str, bool], int]:
    return Counter(
        (bench.name, query.multi_tool)
        for bench in load_query_sets(parts=parts)
        for query in bench.queries
    )


def test_the_parts_are_fixed_disjoint_and_dev_by_default() -> None:
    dev = _counts(("dev",))
    assert dev == _counts(("dev",))
    assert dev[("stabletoolbench", True)] == 31 and dev[("seal-tools", True)] == 325
    test = _counts(("test",))
    assert test[("stabletoolbench", False)] == 327 and test[("seal-tools", True)] == 735
    ids = {
        part: {q.query_id for b in load_query_sets(parts=(part,)) for q in b.queries}
        for part in ("train", "dev", "test")
    }
    assert not ids["train"] & ids["dev"] and not ids["dev"] & ids["test"]
    assert not ids["train"] & ids["test"]
    default = {q.query_id for b in load_query_sets() for q in b.queries}
    assert default == ids["dev"]


def test_kind_filters_and_gold_is_in_each_pool() -> None:
    for bench in load_query_sets(parts=("dev", "test"), kind="multi"):
        pool = {tool.id for tool in bench.tools}
        assert bench.queries and all(q.multi_tool for q in bench.queries)
        assert all(set(q.gold) <= pool for q in bench.queries)
    singles = [q for b in load_query_sets(kind="single") for q in b.queries]
    assert singles and all(q.tools_needed == 1 for q in singles)


def test_seal_dev_file_is_train_and_bad_parts_are_refused() -> None:
    seal_dev = RetrievalQuery("seal_dev:x", "q", "seal", "dev", ("seal/a",), 2)
    assert query_part(seal_dev) == "train"
    with pytest.raises(ConfigError, match="unknown query part or set"):
        load_query_sets(parts=("validation",))

from __future__ import annotations

from training.experiments.first_search import WORDINGS, first_search_recall
from training.task_source import TaskSource, build_task_set


async def test_first_search_recall_rows_per_wording_and_top_k() -> None:
    task_set = build_task_set(TaskSource(kind="builtin"), 6, seed=0, split="dev")
    rows = await first_search_recall(task_set, top_ks=(1, 4))
    assert {(row["wording"], row["top_k"]) for row in rows} == {
        (wording, top_k) for wording in WORDINGS for top_k in (1, 4)
    }
    by_key = {(row["wording"], row["top_k"]): row for row in rows}
    for row in rows:
        assert row["tasks"] == 6
        assert 0.0 <= row["recall_ci"][0] <= row["recall"] <= row["recall_ci"][1] <= 1.0
        assert row["all_gold"] <= row["recall"]
    # more cards never find fewer gold tools; one whole-request query shows top_k cards
    for wording in WORDINGS:
        assert by_key[(wording, 4)]["recall"] >= by_key[(wording, 1)]["recall"]
    assert by_key[("request", 4)]["cards_shown"] == 4.0
    # the gold tool's own description finds it: the privileged wording's upper bound
    assert by_key[("description need", 4)]["recall"] == 1.0

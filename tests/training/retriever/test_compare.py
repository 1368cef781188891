"""The trained-vs-untrained comparison: per-query scores, subsets, intervals and the table."""

from __future__ import annotations

from paraagent_runtime.retrieval.bundled import BASE_MODEL_NAME
from paraagent_runtime.retrieval.stabletoolbench import RetrievalQuery
from tests.training.retriever.records import RECORDS
from training.retriever.compare import compare_models, comparison_table

TOOLS = [record.to_spec() for record in RECORDS]


async def test_identical_models_differ_by_zero_and_subsets_split_by_need() -> None:
    queries = [
        RetrievalQuery("a", "weather forecast for Oslo", "G1", "dev", gold=(TOOLS[0].id,)),
        RetrievalQuery(
            "b", "alerts and stations near Oslo", "G2", "dev", (TOOLS[1].id, TOOLS[2].id), 2
        ),
    ]
    comparison = await compare_models(
        "tiny", TOOLS, queries, models=(BASE_MODEL_NAME, BASE_MODEL_NAME), modes=("dense",)
    )
    summary = comparison.summary()
    assert summary["queries"] == {"single": 1, "multi": 1, "all": 2}
    for subset in ("single", "multi", "all"):
        for diff in summary["trained_minus_untrained"][subset]["dense"].values():
            assert diff["estimate"] == diff["low"] == diff["high"] == 0.0
    ndcg = summary["means"]["single"][BASE_MODEL_NAME]["dense"]["ndcg@5"]
    assert 0.0 <= ndcg["low"] <= ndcg["estimate"] <= ndcg["high"] <= 100.0
    rows = comparison.per_query()
    assert [row["query_id"] for row in rows] == ["a", "b"]
    assert len(rows[0][f"{BASE_MODEL_NAME}|dense"]["top5"]) == 5
    table = comparison_table(summary)
    assert "| multi | dense | completeness@5 |" in table

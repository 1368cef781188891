"""The missing-extra error, lazy exports, and the evaluation on a tiny StableToolBench folder."""

from __future__ import annotations

import json

import pytest

import paraagent_runtime.retrieval as retrieval
from paraagent_runtime.errors import ConfigError, UserError
from paraagent_runtime.retrieval import HybridToolSearch, RetrievalConfig
from paraagent_runtime.retrieval._deps import require
from paraagent_runtime.retrieval.evaluate import (
    drop_duplicates,
    evaluate_retrieval,
    report_table,
    write_report,
)
from paraagent_runtime.retrieval.querysets import load_query_sets
from paraagent_runtime.retrieval.stabletoolbench import load_stabletoolbench
from paraagent_runtime.tools import ToolSpec


def test_missing_extra_names_the_extra() -> None:
    with pytest.raises(UserError, match=r"paraagent\[retrieval\]"):
        require("faiss_that_is_not_installed")


def test_unknown_export_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = retrieval.NoSuchThing
    assert set(retrieval.__all__) <= set(retrieval._WHERE)


def test_default_index_dir_honours_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PARAAGENT_INDEX_DIR", str(tmp_path / "idx"))
    assert retrieval.default_index_dir() == tmp_path / "idx"
    monkeypatch.delenv("PARAAGENT_INDEX_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert retrieval.default_index_dir() == tmp_path / "paraagent" / "tool-index"


def test_bad_config_is_rejected() -> None:
    with pytest.raises(ConfigError, match="dense_weight"):
        RetrievalConfig(dense_weight=1.5)
    with pytest.raises(ConfigError, match="not a local"):
        retrieval.SentenceEncoder("/nonexistent/model")


def test_loader_builds_pool_and_gold(tiny_bench) -> None:
    bench = load_stabletoolbench(tiny_bench)
    assert [tool.id for tool in bench.tools] == [
        "weather_hub/forecast",
        "weather_hub/alerts",
        "fx_rates/convert",
        "lyrics/song_lyrics",
    ]
    assert bench.tools[3].description == "Lyrics: Song lyrics"
    assert bench.tools[0].input_schema["required"] == ["q"]
    assert {q.group for q in bench.queries} == {"G1", "G2"}
    assert bench.queries[-1].gold == ("fx_rates/convert", "lyrics/song_lyrics")
    assert bench.queries[-1].tools_needed == 2 and bench.queries[0].tools_needed == 1
    with pytest.raises(ConfigError, match="no StableToolBench"):
        load_stabletoolbench(tiny_bench / "nowhere")


async def test_evaluation_reports_kinds_intervals_pairs_and_rankings(
    tiny_bench, encoder, tmp_path
) -> None:
    benches = load_query_sets(tiny_bench.parent, parts=("dev", "test"), sets=["stabletoolbench"])
    seen: list[tuple[int, int]] = []

    def search_for(name: str) -> HybridToolSearch:
        return HybridToolSearch(RetrievalConfig(index_dir=tmp_path / name), encoder=encoder)

    report = await evaluate_retrieval(
        benches,
        search_for=search_for,
        prefill_chunk=3,
        on_progress=lambda name: lambda done, total: seen.append((done, total)),
    )
    assert seen == [(0, 4), (3, 4), (4, 4)]
    assert report.pools == {"stabletoolbench": 4} and report.queries == {"dev": 2, "test": 6}
    test = report.scores["test"]["stabletoolbench"]
    assert set(test) == {"single", "multi", "all"}
    assert set(test["multi"]) == {
        "bm25",
        "dense",
        "hybrid_minmax",
        "hybrid",
        "coverage",
        "hybrid_tuned",
        "coverage_tuned",
    }
    assert test["multi"]["coverage"]["completeness@5"] == 1.0
    assert report.intervals["test"]["all"]["single"]["dense"]["ndcg@5"]["n"] == 5
    paired = report.paired["test"]["all"]["multi"]["coverage - hybrid_minmax"]["ndcg@5"]
    assert paired["low"] <= paired["estimate"] <= paired["high"]
    row = next(r for r in report.rankings if r["id"] == "G2_instruction:7")
    assert row["needs"] == ["Convert 100 USD to EUR", "show the lyrics of Yesterday"]
    assert set(row["top"]["coverage"][:2]) == set(row["gold"]) and row["part"] == "test"
    paths = write_report(report, tmp_path / "out")
    assert json.loads(paths[0].read_text())["rankings"][0]["top"]["dense"]
    assert report_table(report).row_count == 2 * 3 * 7
    seen.clear()
    await evaluate_retrieval(
        benches, search_for=search_for, on_progress=lambda name: lambda *a: seen.append(a)
    )
    assert seen == [(0, 0)]


def test_distractor_copies_of_pool_tools_are_dropped(tiny_bench) -> None:
    pool = load_stabletoolbench(tiny_bench).tools
    copy = ToolSpec(id="rapidapi_fx_rates/convert", description="x", provider="rapidapi_fx_rates")
    seal_copy = ToolSpec(id="seal_x/convert", description="x", provider="seal_finance")
    other = ToolSpec(id="bank/convert", description="x", provider="Bank")
    same_id = ToolSpec(id=pool[0].id, description="x")
    kept, dropped = drop_duplicates(pool, [copy, seal_copy, other, same_id])
    assert [tool.id for tool in kept] == ["seal_x/convert", "bank/convert"] and dropped == 2

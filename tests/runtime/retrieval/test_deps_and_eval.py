"""The missing-extra error, lazy exports, and the evaluation on a tiny StableToolBench folder."""

from __future__ import annotations

import json

import pytest

import paraagent_runtime.retrieval as retrieval
from paraagent_runtime.errors import ConfigError, UserError
from paraagent_runtime.retrieval import HybridToolSearch, RetrievalConfig
from paraagent_runtime.retrieval._deps import require
from paraagent_runtime.retrieval.evaluate import evaluate_retrieval, report_table, write_report
from paraagent_runtime.retrieval.stabletoolbench import load_stabletoolbench


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
    with pytest.raises(ConfigError, match="no StableToolBench"):
        load_stabletoolbench(tiny_bench / "nowhere")


async def test_evaluation_reports_every_system_group_and_metric(
    tiny_bench, encoder, tmp_path
) -> None:
    search = HybridToolSearch(encoder=encoder, reranker=lambda q, docs: [len(d) for d in docs])
    report = await evaluate_retrieval(tiny_bench, search=search)
    assert report.pool_size == 4 and report.queries == 7
    scores = report.scores["all"]
    assert set(scores) == {"bm25", "dense", "hybrid", "hybrid_rrf", "hybrid_tuned", "reranked"}
    assert set(scores["dense"]) == {"all", "G1", "G2"}
    assert len(scores["dense"]["all"]) == 12
    assert scores["dense"]["G1"]["recall@3"] == 1.0
    assert all(0.0 <= v <= 1.0 for s in scores.values() for g in s.values() for v in g.values())
    paths = write_report(report, tmp_path / "out")
    assert [p.name for p in paths] == ["retrieval_eval.json", "retrieval_eval.png"]
    assert json.loads(paths[0].read_text())["context"]["toolomni"] == 78.3
    assert paths[1].stat().st_size > 1000
    assert report_table(report).row_count == 6 * 3

"""Training pairs: written from tool text, hard negatives from the provider, holdout kept out."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from mcp_servers.toolenv.catalog_tasks import catalog_holdout
from paraagent_runtime import ConfigError
from paraagent_runtime.documents import tool_document
from paraagent_runtime.retrieval.stabletoolbench import RetrievalBench, RetrievalQuery
from tests.training.retriever.records import RECORDS, make_record
from training.config import load_config
from training.retriever import RetrieverTrainConfig
from training.retriever.pairs import (
    TRAINING_QUERY_SET_LICENSES,
    TRAINING_SOURCE_LICENSES,
    benchmark_pairs,
    build_pairs,
    commercially_usable,
    synthesize_queries,
    trainable_records,
)

_SHIPPED = Path(__file__).parents[3] / "paraagent_runtime/retrieval/models/toolspace-minilm"


def test_trainable_records_leave_out_other_sources_and_the_holdout() -> None:
    many = [make_record(f"p{i}", "get_x", f"c{i % 40}") for i in range(400)]
    kept = trainable_records([*many, *RECORDS], sources=("openapi",), holdout_rate=0.1)
    holdout = catalog_holdout(many, rate=0.1)
    assert holdout.categories and holdout.providers
    assert all(holdout.split_of(record) == "seen" for record in kept)
    assert all(record.source == "openapi" for record in kept)
    assert 0 < len(kept) < len(many) + len(RECORDS) - 1


def test_queries_are_written_from_the_tool_not_copied() -> None:
    queries = synthesize_queries(RECORDS[0], random.Random(0), 4)
    assert 1 <= len(queries) <= 4
    assert {kind for _, kind in queries} <= {"request", "name"}
    document = tool_document(RECORDS[0].to_spec())
    assert all(query and query not in document for query, _ in queries)


def test_pairs_have_provider_negatives_and_are_reproducible() -> None:
    records = RECORDS[:-1]
    pairs = build_pairs(records, queries_per_tool=2, multi_intent_share=0.5, max_pairs=1000, seed=1)
    documents = {tool_document(r.to_spec()): r for r in records}
    for pair in pairs:
        assert pair.negative != pair.positive
        if pair.kind != "multi":
            assert documents[pair.negative].provider == documents[pair.positive].provider
    assert {"request", "multi"} <= {pair.kind for pair in pairs}
    again = build_pairs(records, queries_per_tool=2, multi_intent_share=0.5, max_pairs=1000, seed=1)
    assert again == pairs
    capped = build_pairs(records, queries_per_tool=2, multi_intent_share=0.0, max_pairs=5, seed=1)
    assert len(capped) == 5


def test_benchmark_pairs_make_one_pair_per_gold_tool() -> None:
    tools = [record.to_spec() for record in RECORDS[:6]]
    query = RetrievalQuery(
        "q1", "forecast and alerts for Oslo", "seal", "dev", gold=(tools[0].id, tools[1].id)
    )
    bench = RetrievalBench(tools=tools, queries=[query], name="seal-tools")
    pairs = benchmark_pairs([bench], seed=0)
    assert [pair.tool_id for pair in pairs] == [tools[0].id, tools[1].id]
    assert all(pair.kind == "benchmark" and pair.query == query.text for pair in pairs)
    assert pairs[0].positive == tool_document(tools[0])


def test_config_validates_and_reads_assignments() -> None:
    config = load_config(RetrieverTrainConfig, assignments=["lora_rank=8", "sources=[openapi]"])
    assert config.lora_rank == 8 and config.sources == ("openapi",)
    with pytest.raises(ConfigError, match="crawled"):
        RetrieverTrainConfig(sources=("toucan_crawled",))
    with pytest.raises(ConfigError, match="batch_size"):
        RetrieverTrainConfig(batch_size=0)
    with pytest.raises(ConfigError, match="holdout_rate"):
        RetrieverTrainConfig(holdout_rate=1.0)


def test_no_training_pair_comes_from_a_non_commercial_source() -> None:
    permissive = [
        make_record(f"{source}_p{i}", f"get_{thing}", f"c{i}", source=source, license="MIT")
        for i, source in enumerate(TRAINING_SOURCE_LICENSES)
        for thing in ("forecast", "alerts")
    ]
    non_commercial = [
        make_record("rapidapi_weather", "get_forecast", "c0", "stabletoolbench", "CC-BY-NC-4.0"),
        make_record("rapidapi_geo", "get_alerts", "c1", source="openapi"),
        make_record("nc_server", "get_stations", "c2", "toucan", "CC BY-NC-SA 4.0"),
        make_record("nc_other", "list_stations", "c3", "toucan", "Non-commercial use only"),
    ]
    everything = [*permissive, *non_commercial]
    assert not any(commercially_usable(record) for record in non_commercial)
    sources = (*TRAINING_SOURCE_LICENSES, "stabletoolbench")
    kept = trainable_records(everything, sources=sources, holdout_rate=0.01)
    assert kept and all(commercially_usable(record) for record in kept)
    pairs = build_pairs(kept, queries_per_tool=2, multi_intent_share=0.5, max_pairs=1000, seed=0)
    refused = {tool_document(record.to_spec()) for record in non_commercial}
    allowed = {record.id for record in permissive}
    assert pairs
    for pair in pairs:
        assert pair.tool_id in allowed
        assert pair.positive not in refused and pair.negative not in refused


def test_non_commercial_sources_and_query_sets_are_refused() -> None:
    assert set(RetrieverTrainConfig().sources) <= set(TRAINING_SOURCE_LICENSES)
    assert set(RetrieverTrainConfig().query_sets) <= set(TRAINING_QUERY_SET_LICENSES)
    with pytest.raises(ConfigError, match="stabletoolbench"):
        RetrieverTrainConfig(sources=("openapi", "stabletoolbench"))
    with pytest.raises(ConfigError, match="stabletoolbench"):
        RetrieverTrainConfig(query_sets=("stabletoolbench",))
    tools = [record.to_spec() for record in RECORDS[:2]]
    query = RetrievalQuery("q1", "forecast for Oslo", "stb", "train", gold=(tools[0].id,))
    with pytest.raises(ConfigError, match="stabletoolbench"):
        benchmark_pairs([RetrievalBench(tools=tools, queries=[query])], seed=0)


def test_the_shipped_adapter_was_trained_on_permissive_sources_only() -> None:
    summary = json.loads((_SHIPPED / "training_summary.json").read_text(encoding="utf-8"))
    assert summary["tools_by_source"]
    assert set(summary["tools_by_source"]) <= set(TRAINING_SOURCE_LICENSES)
    assert set(summary["config"]["query_sets"]) <= set(TRAINING_QUERY_SET_LICENSES)
    card = (_SHIPPED / "README.md").read_text(encoding="utf-8")
    assert all(licence in card for licence in TRAINING_SOURCE_LICENSES.values())

"""HybridToolSearch on a 200-tool catalog with the real MiniLM model, real FAISS and bm25s."""

from __future__ import annotations

import asyncio
import logging
import math

import pytest

from paraagent_runtime.errors import UserError
from paraagent_runtime.retrieval import HybridToolSearch, RetrievalConfig, SearchMode
from paraagent_runtime.search import ToolSearch
from paraagent_runtime.tools import ToolSpec


@pytest.fixture()
async def index(encoder, catalog, index_dir) -> HybridToolSearch:
    search = HybridToolSearch(RetrievalConfig(index_dir=index_dir), encoder=encoder)
    await search.update(catalog)
    return search


async def test_is_a_tool_search_and_finds_the_obvious_tool(index) -> None:
    assert isinstance(index, ToolSearch)
    assert index.size == 200 and index.index_kind == "flat"
    for mode in SearchMode:
        results = await index.search("get the weather forecast", top_k=3, mode=mode)
        assert results[0][0] == "weather/get_weather_forecast", mode
        assert [score for _, score in results] == sorted((s for _, s in results), reverse=True)


async def test_top_k_is_respected_and_capped(index) -> None:
    assert len(await index.search("stock quote", top_k=7)) == 7
    assert len(await index.search("stock quote", top_k=10_000, mode="dense")) == 200


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
async def test_empty_query_returns_nothing(index, query) -> None:
    assert await index.search(query) == []


async def test_bad_arguments_raise_user_errors(index) -> None:
    with pytest.raises(UserError, match="top_k"):
        await index.search("weather", top_k=0)
    with pytest.raises(UserError, match="unknown search mode"):
        await index.search("weather", mode="fuzzy")


async def test_huge_query_is_truncated_not_rejected(index) -> None:
    query = "send an email with an attachment " + "lorem ipsum " * 100_000
    results = await index.search(query, top_k=5)
    assert len(results) == 5
    assert all(math.isfinite(score) for _, score in results)
    assert any(tool.startswith("mail/") for tool, _ in results)


@pytest.mark.parametrize(
    "query", ["Wettervorhersage für Berlin morgen", "明天北京的天气怎么样", "прогноз погоды", "🌧️☔"]
)
async def test_non_english_queries_return_valid_results(index, catalog, query) -> None:
    ids = {tool.id for tool in catalog}
    for mode in SearchMode:
        results = await index.search(query, top_k=5, mode=mode)
        assert all(tool in ids and math.isfinite(score) for tool, score in results)
    assert len(await index.search(query, top_k=5, mode="dense")) == 5


async def test_duplicate_and_empty_descriptions(encoder, caplog) -> None:
    tools = [
        ToolSpec(id="a/lookup", description="Look up a word in the dictionary.", provider="dict"),
        ToolSpec(id="b/lookup", description="Look up a word in the dictionary.", provider="dict"),
        ToolSpec(id="c/thesaurus_synonyms", description=""),
        ToolSpec(id="a/lookup", description="a later duplicate id"),
    ]
    search = HybridToolSearch(encoder=encoder)
    with caplog.at_level(logging.WARNING):
        await search.update(tools)
    assert "duplicate tool id 'a/lookup'" in caplog.text
    assert search.size == 3
    assert search.last_update.embedded == 2  # identical documents share one embedding
    assert search.document("a/lookup").endswith("Look up a word in the dictionary.")
    top = [tool for tool, _ in await search.search("dictionary word lookup", top_k=2)]
    assert set(top) == {"a/lookup", "b/lookup"}
    assert (await search.search("thesaurus synonyms", top_k=1))[0][0] == "c/thesaurus_synonyms"


async def test_incremental_update_embeds_only_changes(index, catalog) -> None:
    added = ToolSpec(id="astro/moon_phase", description="Current phase of the moon for a date.")
    changed = catalog[0].model_copy(update={"description": "Tide tables for a harbour."})
    await index.update([changed, *catalog[2:], added])
    stats = index.last_update
    assert (stats.added, stats.removed, stats.embedded) == (1, 1, 2)
    assert (await index.search("moon phase tonight", top_k=1))[0][0] == "astro/moon_phase"
    assert (await index.search("harbour tide tables", top_k=1))[0][0] == catalog[0].id
    removed = catalog[1].id
    for mode in SearchMode:
        hits = await index.search(catalog[1].description, top_k=200, mode=mode)
        assert removed not in {tool for tool, _ in hits}
    await index.update([])
    assert index.size == 0 and await index.search("moon") == []


async def test_hnsw_above_threshold_agrees_with_exact(encoder, catalog, index, index_dir) -> None:
    hnsw = HybridToolSearch(
        RetrievalConfig(exact_threshold=50, index_dir=index_dir), encoder=encoder
    )
    await hnsw.update(catalog)
    assert hnsw.index_kind == "hnsw"
    for query in ("crypto price", "repository issues", "nutrition facts of an apple"):
        exact = [tool for tool, _ in await index.search(query, top_k=5, mode="dense")]
        approx = [tool for tool, _ in await hnsw.search(query, top_k=5, mode="dense")]
        assert approx == exact


async def test_two_stage_searches_only_the_best_providers(encoder, catalog, index_dir) -> None:
    config = RetrievalConfig(two_stage=True, providers_top_k=1, index_dir=index_dir)
    search = HybridToolSearch(config, encoder=encoder)
    await search.update(catalog)
    results = await search.search("song lyrics of an artist", top_k=20)
    assert len(results) == 20
    assert {tool.split("/")[0] for tool, _ in results} == {"music"}


async def test_reranker_hook_reorders_the_head(encoder, catalog, index_dir) -> None:
    def prefer_update(query: str, documents) -> list[float]:
        return [1.0 if "| update " in document else 0.0 for document in documents]

    search = HybridToolSearch(
        RetrievalConfig(index_dir=index_dir), encoder=encoder, reranker=prefer_update
    )
    await search.update(catalog)
    top = await search.search("weather forecast", top_k=3)
    assert top[0][0] == "weather/update_weather_forecast"
    assert top[0][1] == 1.0


async def test_reranker_with_wrong_arity_is_a_user_error(encoder, catalog, index_dir) -> None:
    search = HybridToolSearch(
        RetrievalConfig(index_dir=index_dir), encoder=encoder, reranker=lambda q, docs: [1.0]
    )
    await search.update(catalog)
    with pytest.raises(UserError, match="re-ranker returned 1 scores"):
        await search.search("weather forecast")


async def test_update_runs_off_the_event_loop(encoder, catalog) -> None:
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    search = HybridToolSearch(encoder=encoder)
    task = asyncio.create_task(ticker())
    await search.update(catalog[:64])
    done.set()
    await task
    assert search.last_update.embedded == 64
    assert ticks > 10


async def test_concurrent_searches_during_update_see_a_consistent_index(index, catalog) -> None:
    extra = [ToolSpec(id=f"x/tool_{i}", description=f"extra tool {i}") for i in range(30)]
    valid = {tool.id for tool in catalog} | {tool.id for tool in extra}
    results = await asyncio.gather(
        index.update(catalog + extra),
        *(index.search(f"flight status {i}", top_k=5) for i in range(8)),
    )
    for hits in results[1:]:
        assert len(hits) == 5 and {tool for tool, _ in hits} <= valid
    assert index.size == 230

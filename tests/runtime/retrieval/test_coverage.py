"""The rule-based decomposer, the coverage merge, z-score fusion and the coverage search mode."""

from __future__ import annotations

import numpy as np
import pytest

from paraagent_runtime.meta import SEARCH_TOOLS, MetaToolSource
from paraagent_runtime.retrieval import HybridToolSearch, RetrievalConfig, SearchMode
from paraagent_runtime.retrieval.coverage import cover, need_rankings
from paraagent_runtime.retrieval.decompose import decompose
from paraagent_runtime.retrieval.fusion import FusionMethod, fuse_many, zscore_fusion
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.toolspace import Toolspace


def _texts(query: str) -> list[str]:
    return [need.text for need in decompose(query)]


@pytest.mark.parametrize(
    ("query", "needs"),
    [
        (
            "Get the weather in Paris. Also convert 10 USD to EUR.",
            ["Get the weather in Paris.", "convert 10 USD to EUR."],
        ),
        (
            "QR code for my blog URL and also phishing statistics",
            ["QR code for my blog URL", "phishing statistics"],
        ),
        (
            "Tell me about Messi's clubs, managers, and referees?",
            [
                "Tell me about Messi's clubs",
                "Tell me about Messi's managers",
                "Tell me about Messi's referees",
            ],
        ),
        (
            "Do these: 1. Book a table for two. 2. Send the invite to Ann. Thank you!",
            ["Book a table for two.", "Send the invite to Ann."],
        ),
        (
            "I'm planning a family trip and I want hotels in Rome. My friend loves puzzles. "
            "Also scramble the word PUZZLE. I am looking for a chess app too.",
            [
                "I want hotels in Rome.",
                "scramble the word PUZZLE.",
                "I am looking for a chess app too.",
            ],
        ),
        ("I'm planning a trip to Rome.", None),
        ("Find flights to Rome and hotels near the Colosseum", None),
        ("Can you help me with that?", None),
        ("天气预报。另外，汇率是多少？", None),
    ],
)
def test_decompose_splits_sentences_markers_and_enumerations(query, needs) -> None:
    assert _texts(query) == (needs or [" ".join(query.split())])


def test_needs_point_back_into_the_query_and_are_capped() -> None:
    query = "Weather in Oslo please. Then book a cab to the airport."
    first, second = decompose(query)
    assert query[slice(*first.span)] == "Weather in Oslo please."
    assert query[slice(*second.span)] == "Then book a cab to the airport."
    assert second.text == "book a cab to the airport."
    many = ". ".join(f"Get report number {i}" for i in range(10))
    assert len(decompose(many, max_needs=3)) == 3
    assert decompose("   ") == []


def test_cover_gives_every_need_a_slot_before_any_gets_two() -> None:
    qr = [(f"qr{i}", 1.0 - i / 10) for i in range(5)]
    phishing = [("phish", 0.5), ("qr0", 0.4)]
    hits = cover([qr, phishing], 3)
    assert [(hit.tool, hit.need) for hit in hits] == [("qr0", 0), ("phish", 1), ("qr1", 0)]
    assert [hit.tool for hit in cover([qr, []], 10)] == [f"qr{i}" for i in range(5)]


def test_cover_orders_a_round_by_score_and_shares_a_tool_two_needs_pick() -> None:
    preamble = [("misc", 0.1), ("other", 0.05)]
    weather = [("forecast", 2.0), ("alerts", 1.0)]
    assert [h.tool for h in cover([preamble, weather], 2)] == ["forecast", "misc"]
    same = [("forecast", 1.5), ("radar", 0.2)]
    hits = cover([weather, same], 3)
    assert [(h.tool, h.need) for h in hits] == [("forecast", 0), ("alerts", 0), ("radar", 1)]


def test_cover_diversity_prefers_a_new_provider() -> None:
    ranking = [("a/1", 3.0), ("a/2", 2.0), ("b/1", 1.0)]
    owner = {"a/1": "a", "a/2": "a", "b/1": "b"}
    assert [h.tool for h in cover([ranking], 3, provider=owner)] == ["a/1", "a/2", "b/1"]
    spread = cover([ranking], 3, provider=owner, diversity=2.0)
    assert [h.tool for h in spread] == ["a/1", "b/1", "a/2"]


def test_zscore_fusion_has_no_fixed_share_for_a_list_top() -> None:
    # Min-max would give "d" and "l" exactly the same fused score (1.0 * 0.5) whatever the margins.
    dense = [("d", 0.61), ("x", 0.60), ("y", 0.59), ("z", 0.20)]
    lexical = [("l", 30.0), ("x", 5.0), ("y", 4.0), ("w", 3.0)]
    fused = dict(zscore_fusion([dense, lexical]))
    assert fused["l"] > fused["d"]
    assert zscore_fusion([[("a", 1.0), ("b", 1.0)], []]) == [("a", 0.0), ("b", 0.0)]


async def test_coverage_mode_covers_both_needs_and_says_which_part(encoder, catalog) -> None:
    search = HybridToolSearch(RetrievalConfig(mode=SearchMode.COVERAGE), encoder=encoder)
    await search.update(catalog)
    query = "Show me the weather forecast for Paris and also send an email to Bob"
    hits = await search.search_hits(query, top_k=4)
    providers = [hit.tool.split("/")[0] for hit in hits[:2]]
    assert sorted(providers) == ["mail", "weather"]
    answers = {hit.tool.split("/")[0]: hit.answers for hit in hits[:2]}
    assert answers == {
        "weather": "Show me the weather forecast for Paris",
        "mail": "send an email to Bob",
    }
    single = await search.search_hits("weather forecast", top_k=3)
    hybrid = await search.search("weather forecast", top_k=3, mode="hybrid")
    assert [(h.tool, h.score) for h in single] == hybrid
    assert all(hit.answers is None for hit in single)


async def test_search_tools_cards_say_which_part_they_answer(encoder) -> None:
    async def run(**arguments: object) -> object:
        return arguments

    names = {
        "forecast": "Weather forecast for a city",
        "send_email": "Send an email message to a contact",
        "stock_quote": "Latest stock price of a ticker",
    }
    source = FunctionToolSource(
        "desk", [FunctionTool(run, name=n, description=d) for n, d in names.items()]
    )
    search = HybridToolSearch(RetrievalConfig(mode=SearchMode.COVERAGE), encoder=encoder)
    toolspace = Toolspace([source], search=search)
    await toolspace.refresh()
    session = await toolspace.new_session()
    query = "What is the weather forecast in Rome? Also email the result to Ann."
    cards = await MetaToolSource(session).call_tool(SEARCH_TOOLS, {"query": query, "top_k": 2})
    answers = {card["name"]: card.get("answers") for card in cards}
    assert answers == {
        "forecast": "What is the weather forecast in Rome?",
        "send_email": "Also email the result to Ann.",
    }
    plain = await MetaToolSource(session).call_tool(SEARCH_TOOLS, {"query": "stock price"})
    assert "answers" not in plain[0]


def test_need_rankings_match_fusing_each_needs_four_lists() -> None:
    # The whole request's lists are normalized once and shared; the result is the plain fusion.
    whole = ([("a", 0.9), ("b", 0.7), ("c", 0.1)], [("c", 9.0), ("d", 2.0)])
    needs = [
        ([("b", 0.8), ("a", 0.3)], [("b", 5.0), ("e", 1.0)]),
        ([("d", 0.6), ("c", 0.5)], []),
    ]
    for method in FusionMethod:
        shared = need_rankings(
            needs, whole, method=method, dense_weight=0.4, rrf_k=60.0, context=0.25
        )
        for need, ranking in zip(needs, shared, strict=True):
            alone = fuse_many(
                [*need, *whole], (0.75 * 0.4, 0.75 * 0.6, 0.25 * 0.4, 0.25 * 0.6), method=method
            )
            assert [tool for tool, _ in ranking] == [tool for tool, _ in alone]
            assert [score for _, score in ranking] == pytest.approx([s for _, s in alone])


async def test_a_request_with_needs_embeds_only_its_needs(encoder, catalog) -> None:
    search = HybridToolSearch(RetrievalConfig(mode=SearchMode.COVERAGE), encoder=encoder)
    await search.update(catalog)
    query = "Show me the weather forecast for Paris and also send an email to Bob"
    calls: list[list[str]] = []
    original = encoder.encode_queries

    def counting(texts):
        calls.append(list(texts))
        return original(texts)

    encoder.encode_queries = counting  # type: ignore[method-assign]
    try:
        (lists,) = await search.query_lists([query])
    finally:
        del encoder.encode_queries
    needs = [need.text for need in lists.needs]
    assert calls == [needs] and len(lists.per_need) == 2
    # The whole request's dense list is the search by the word-weighted mean of the needs'.
    vectors = encoder.encode_queries(needs)
    mean = np.asarray([len(need.split()) for need in needs], dtype=np.float32) @ vectors
    mean /= np.linalg.norm(mean)
    scores = search._snapshot.vectors @ mean
    best = [search._snapshot.ids[i] for i in np.argsort(-scores)[:5]]
    assert [tool for tool, _ in lists.whole[0][:5]] == best
    # A single-need query embeds itself, as the hybrid does, and has no per-need lists.
    (single,) = await search.query_lists(["weather forecast"])
    (plain,) = await search.rankings(["weather forecast"])
    assert single.per_need == [] and single.whole == plain

"""Shared fixtures: one real MiniLM encoder per session and a small, realistic tool catalog."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from paraagent_runtime.retrieval import HybridToolSearch, RetrievalConfig, SentenceEncoder
from paraagent_runtime.tools import ToolSpec

_PROVIDERS = {
    "weather": ("weather forecast", "temperature", "rain", "wind speed", "humidity"),
    "flights": ("flight status", "airport departures", "airline baggage", "seat map", "boarding"),
    "finance": ("stock quote", "currency exchange rate", "crypto price", "dividend", "market cap"),
    "maps": ("driving directions", "geocode address", "nearby restaurants", "traffic", "distance"),
    "mail": ("send email", "inbox messages", "email attachment", "spam folder", "mail draft"),
    "calendar": ("create meeting", "list events", "free busy slots", "reminder", "time zone"),
    "music": ("song lyrics", "artist albums", "playlist tracks", "concert tickets", "music chart"),
    "news": ("top headlines", "news article", "sports scores", "election results", "press release"),
    "recipes": (
        "cooking recipe",
        "nutrition facts",
        "ingredient substitute",
        "meal plan",
        "wine pairing",
    ),
    "github": (
        "pull request",
        "repository issues",
        "commit history",
        "code search",
        "release notes",
    ),
}
_VERBS = ("get", "search", "list", "update")


def make_catalog() -> list[ToolSpec]:
    """200 tools: 10 providers x 5 topics x 4 verbs, each with a described parameter."""
    tools = []
    for provider, topics in _PROVIDERS.items():
        for topic in topics:
            for verb in _VERBS:
                slug = topic.replace(" ", "_")
                tools.append(
                    ToolSpec(
                        id=f"{provider}/{verb}_{slug}",
                        description=f"{verb.capitalize()} {topic} data from {provider}.",
                        input_schema={
                            "type": "object",
                            "properties": {
                                "query": {
                                    "type": "string",
                                    "description": f"which {topic} to {verb}",
                                },
                                "format": {"type": "string", "enum": ["json", "xml"]},
                            },
                        },
                        provider=provider,
                    )
                )
    return tools


@pytest.fixture(scope="session")
def encoder() -> SentenceEncoder:
    """The bundled all-MiniLM-L6-v2, loaded once for the whole test session."""
    return SentenceEncoder()


@pytest.fixture()
def catalog() -> list[ToolSpec]:
    """A fresh copy of the 200-tool catalog."""
    return make_catalog()


@pytest.fixture(scope="session")
def seeded_store(encoder, tmp_path_factory) -> Path:
    """An index directory holding the catalog's embeddings, written once per session."""
    directory = tmp_path_factory.mktemp("seed-index")
    search = HybridToolSearch(RetrievalConfig(index_dir=directory), encoder=encoder)
    asyncio.run(search.update(make_catalog()))
    return directory


@pytest.fixture()
def index_dir(seeded_store, tmp_path) -> Path:
    """A private copy of the seeded index directory (embeddings load from disk, not the model)."""
    target = tmp_path / "index"
    shutil.copytree(seeded_store, target)
    return target


def _api(tool: str, api: str, description: str, parameter: str = "q") -> dict:
    return {
        "category_name": "Data",
        "tool_name": tool,
        "api_name": api,
        "api_description": description,
        "required_parameters": [
            {"name": parameter, "type": "STRING", "description": "", "default": ""}
        ],
        "optional_parameters": [],
        "method": "GET",
    }


@pytest.fixture()
def tiny_bench(tmp_path) -> Path:
    """A two-group StableToolBench folder (``<data>/stabletoolbench``): 4 APIs, 6 G1 queries
    (one in the dev part) and 2 G2 queries (``G2_instruction:5`` dev, ``:7`` test)."""
    folder = tmp_path / "data" / "stabletoolbench" / "solvable_queries" / "test_instruction"
    folder.mkdir(parents=True)
    apis = [
        _api("Weather Hub", "Forecast", "Weather forecast for a city"),
        _api("Weather Hub", "Alerts", "Severe weather alerts"),
        _api("FX Rates", "Convert", "Convert an amount between currencies"),
        _api("Lyrics", "Song lyrics", ""),
    ]
    g1 = [
        {
            "query": "Will it rain in Paris tomorrow?",
            "query_id": i,
            "api_list": apis,
            "relevant APIs": [["Weather Hub", "Forecast"]],
        }
        for i in range(6)
    ]
    g2 = [
        {
            "query": text,
            "query_id": query_id,
            "api_list": apis,
            "relevant APIs": [["FX Rates", "Convert"], ["Lyrics", "Song lyrics"]],
        }
        for query_id, text in (
            (5, "Show the lyrics of Hey Jude. Also convert 5 GBP to USD."),
            (7, "Convert 100 USD to EUR and show the lyrics of Yesterday"),
        )
    ]
    (folder / "G1_instruction.json").write_text(json.dumps(g1))
    (folder / "G2_instruction.json").write_text(json.dumps(g2))
    return tmp_path / "data" / "stabletoolbench"

"""Tool ids and model-facing names: valid, deterministic, collision-free, at most 64 chars."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paraagent_runtime.naming import MAX_NAME_LENGTH, model_facing_name, split_tool_id, tool_id

VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_tool_id_round_trips_through_split() -> None:
    assert tool_id("github", "repos/get") == "github/repos/get"
    assert split_tool_id("github/repos/get") == ("github", "repos/get")
    assert split_tool_id("search_tools") == ("", "search_tools")


@pytest.mark.parametrize(
    ("identifier", "name"),
    [
        ("weather/forecast", "weather__forecast"),
        ("search_tools", "search_tools"),
        ("a-b/c_d", "a-b__c_d"),
    ],
)
def test_valid_names_are_kept(identifier: str, name: str) -> None:
    assert model_facing_name(identifier) == name


def test_lossy_names_get_a_hash_suffix() -> None:
    name = model_facing_name("my server/get.thing")
    assert re.fullmatch(r"my_server__get_thing_[0-9a-f]{8}", name)
    assert model_facing_name("my server/get thing") != name


def test_long_names_are_cut_to_the_limit() -> None:
    first = model_facing_name("s/" + "x" * 100)
    second = model_facing_name("s/" + "x" * 101)
    assert len(first) == len(second) == MAX_NAME_LENGTH
    assert first != second


@given(st.text(min_size=1, max_size=120), st.text(min_size=1, max_size=120))
def test_any_id_maps_to_a_valid_deterministic_name(source: str, tool: str) -> None:
    identifier = tool_id(source, tool)
    name = model_facing_name(identifier)
    assert VALID.fullmatch(name)
    assert model_facing_name(identifier) == name


@given(
    st.lists(
        st.text(alphabet="ab/ .", min_size=1, max_size=8), min_size=2, max_size=20, unique=True
    )
)
def test_distinct_lossy_ids_never_collide(identifiers: list[str]) -> None:
    lossy = [
        identifier
        for identifier in identifiers
        if not VALID.fullmatch(identifier.replace("/", "__", 1))
    ]
    names = [model_facing_name(identifier) for identifier in lossy]
    assert len(set(names)) == len(names)

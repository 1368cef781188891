"""Tool ids and model-facing names: valid, deterministic, collision-free, at most 64 chars."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from paraagent_runtime.naming import (
    MAX_NAME_LENGTH,
    assign_names,
    model_facing_name,
    name_aliases,
    split_tool_id,
    tool_id,
    unique_aliases,
)

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


@pytest.mark.parametrize(
    ("identifiers", "names"),
    [
        # Unique names keep the tool's own name, sanitized only where they must be.
        (
            ["m/math.factorial", "m/get-tiny-image", "m/a/b", "t/get_current_time"],
            ["math_factorial", "get-tiny-image", "a_b", "get_current_time"],
        ),
        # Two sources sharing a name: each gets its source prefix, the rest stay bare.
        (["a/search", "b/search", "b/fetch"], ["a__search", "b__search", "fetch"]),
        # A valid name keeps it against one that only sanitizes to it; the other is prefixed.
        (["s/a.b", "s/a_b"], ["s__a_b", "a_b"]),
        # Only a collision left after prefixing gets a hash.
        (["s/a.b", "s/a b", "s/a_b"], [None, None, "a_b"]),
        # The meta-tools' names are taken.
        (["x/search_tools"], ["x__search_tools"]),
    ],
)
def test_assigned_names_are_as_close_to_the_original_as_the_others_allow(
    identifiers: list[str], names: list[str | None]
) -> None:
    assigned = assign_names(identifiers, reserved={"search_tools", "inspect_tool"})
    for identifier, expected in zip(identifiers, names, strict=True):
        if expected is None:
            assert re.fullmatch(r"s__a_b_[0-9a-f]{8}", assigned[identifier])
        else:
            assert assigned[identifier] == expected
    assert len(set(assigned.values())) == len(identifiers)


def test_prefixed_sources_keep_their_fixed_names_and_take_them_first() -> None:
    assigned = assign_names(
        ["weather/get_forecast", "user/weather__get_forecast", "user/get_forecast"],
        prefixed_sources={"weather"},
    )
    assert assigned == {
        "weather/get_forecast": "weather__get_forecast",
        "user/weather__get_forecast": "user__weather__get_forecast",
        "user/get_forecast": "get_forecast",
    }


def test_aliases_cover_the_original_and_the_usual_spellings_when_unambiguous() -> None:
    names = assign_names(["m/get-tiny-image", "m/math.factorial", "n/math_factorial"])
    aliases = unique_aliases(names, {i: name_aliases(i) for i in names})
    assert aliases["get_tiny_image"] == "get-tiny-image"
    assert aliases["m__get-tiny-image"] == "get-tiny-image"
    assert aliases["m/get-tiny-image"] == "get-tiny-image"
    assert aliases["math.factorial"] == names["m/math.factorial"]
    assert "math_factorial" not in aliases  # a tool's own name, never an alias of another


@given(
    st.lists(
        st.text(alphabet="ab/ ._-", min_size=1, max_size=8), min_size=1, max_size=20, unique=True
    )
)
def test_assigned_names_are_valid_distinct_and_deterministic(identifiers: list[str]) -> None:
    assigned = assign_names(identifiers, reserved={"search_tools"})
    assert all(VALID.fullmatch(name) for name in assigned.values())
    assert len(set(assigned.values())) == len(identifiers)
    assert assign_names(identifiers, reserved={"search_tools"}) == assigned

"""Tasks: gold DAGs execute in the task's world, facts are recomputed, JSONL round-trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.toolenv import ToolEnv, builtin_tasks, execute_gold, generate_tasks
from mcp_servers.toolenv.tasks import STATED_FAMILIES, check_families
from paraagent_runtime.checker import check_answer
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.tasks import load_tasks, resolve_path, save_tasks


@pytest.fixture(scope="module")
def tasks():  # noqa: ANN201 - fixture
    return builtin_tasks()


def test_builtin_tasks_cover_every_family_group_and_shape(tasks) -> None:  # noqa: ANN001
    assert 6 <= len(tasks) <= 12
    assert {t.family for t in tasks} == set(STATED_FAMILIES)
    assert {t.group for t in tasks} == {"G1", "G2", "G3"}
    assert max(t.width for t in tasks) >= 3 and max(t.depth for t in tasks) == 3
    assert min(t.depth for t in tasks) == 1
    assert len({t.id for t in tasks}) == len(tasks)


def test_every_gold_dag_executes_and_reproduces_its_facts(tasks) -> None:  # noqa: ANN001
    env = ToolEnv.builtin()
    for task in tasks:
        outputs = execute_gold(task, env.for_task(task).simulator)
        for fact in task.facts:
            value = resolve_path(outputs, fact.source)
            assert (value if isinstance(value, str) else float(value)) == fact.value or str(
                value
            ).endswith(str(fact.value))
        for call in task.calls:
            assert set(call.depends_on) == {
                ref.strip("[").split(".")[0] for ref in call.bindings.values()
            }


def test_checker_accepts_gold_answers_and_rejects_wrong_ones(tasks) -> None:  # noqa: ANN001
    for task in tasks:
        gold = check_answer(task, task.gold_answer)
        assert gold.success and gold.score == 1.0 and not gold.missing
        wrong = check_answer(task, "Sorry, I found 0 results and it is 999.9 degrees in Atlantis.")
        assert not wrong.success and wrong.score == 0.0


def test_a_tampered_dag_is_detected(tasks) -> None:  # noqa: ANN001
    task = next(t for t in tasks if t.depth >= 2)
    bound = next(c for c in task.calls if c.bindings)
    name = next(iter(bound.bindings))
    broken = task.model_copy(
        update={
            "calls": [
                c
                if c is not bound
                else c.model_copy(update={"arguments": {**c.arguments, name: "x"}})
                for c in task.calls
            ]
        }
    )
    with pytest.raises(ValueError, match="differ from recorded"):
        execute_gold(broken, ToolEnv.builtin().for_task(task).simulator)


def test_generation_is_reproducible_and_splits_differ() -> None:
    first = generate_tasks(12, seed=3, split="train")
    assert [t.model_dump() for t in first] == [
        t.model_dump() for t in generate_tasks(12, seed=3, split="train")
    ]
    test = generate_tasks(12, seed=3, split="test")
    assert {t.seed for t in first}.isdisjoint({t.seed for t in test})
    assert all(t.split == "test" for t in test)
    only = generate_tasks(3, seed=1, families=["stock_in_currency"])
    assert {t.family for t in only} == {"stock_in_currency"} and len({t.query for t in only}) > 1


def test_bad_generation_options_raise_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown"):
        generate_tasks(2, families=["time_travel"])
    with pytest.raises(ConfigError, match="n >= 0"):
        generate_tasks(-1)


def test_jsonl_round_trip_and_bad_files(tmp_path: Path, tasks) -> None:  # noqa: ANN001
    path = tmp_path / "tasks.jsonl"
    save_tasks(tasks, path)
    assert load_tasks(path) == tasks
    path.write_text(path.read_text() + "\n{not json}\n")
    with pytest.raises(ConfigError, match=r"tasks.jsonl:\d+: not a valid task"):
        load_tasks(path)
    (tmp_path / "partial.jsonl").write_text('{"id": "x", "query": "q"}\n')
    with pytest.raises(ConfigError, match="partial.jsonl:1"):
        load_tasks(tmp_path / "partial.jsonl")
    with pytest.raises(ConfigError, match="does not exist"):
        load_tasks(tmp_path / "missing.jsonl")


def test_held_out_splits_really_hold_out_tools_and_categories(records) -> None:  # noqa: ANN001
    from mcp_servers.toolenv.tasks import HELD_OUT_CATEGORIES, HELD_OUT_TOOLS
    from paraagent_runtime.tasks import SPLITS

    category = {record.id: record.category for record in records}
    tools = {
        split: {t for task in generate_tasks(24, seed=3, split=split) for t in task.tools}
        for split in SPLITS
    }
    seen = tools["train"] | tools["test-seen"]
    assert not seen & HELD_OUT_TOOLS and not {category[t] for t in seen} & HELD_OUT_CATEGORIES
    unseen_tools = generate_tasks(12, seed=3, split="test-unseen-tools")
    assert all(set(task.tools) & HELD_OUT_TOOLS for task in unseen_tools)
    assert {category[t] for t in tools["test-unseen-tools"]} <= {category[t] for t in seen}
    assert all(
        {category[t] for t in task.tools} & HELD_OUT_CATEGORIES
        for task in generate_tasks(12, seed=3, split="test-unseen-categories")
    )
    assert {task.group for task in unseen_tools} == {"G1", "G2", "G3"}


def test_split_tasks_are_reproducible_and_verifiable() -> None:
    from paraagent_runtime.tasks import SPLITS

    env = ToolEnv.builtin()
    for split in SPLITS:
        first, again = (
            generate_tasks(6, seed=4, split=split),
            generate_tasks(6, seed=4, split=split),
        )
        assert first == again
        for task in first:
            assert check_answer(task, task.gold_answer).success
            execute_gold(task, env.for_task(task).simulator)


def test_family_lists_are_checked_with_the_caller_named() -> None:
    assert check_families(("stock_compare",), "train", owner="cfg") == ["stock_compare"]
    for families, split, message in (
        ([], "train", "cfg: unknown \\(empty list\\)"),
        (["time_travel"], "train", "cfg: unknown time_travel"),
        (["recipe_nutrition"], "test-seen", "cfg: split 'test-seen' may not use held-out"),
        ("stock_compare", "train", "cfg: expected a list of family names"),
    ):
        with pytest.raises(ConfigError, match=message):
            check_families(families, split, owner="cfg")
    assert check_families(["recipe_nutrition"], "test-unseen-categories", owner="cfg")


@pytest.mark.parametrize("split", ["train", "dev", "test-seen", "builtin", "custom"])
@pytest.mark.parametrize("family", ["recipe_nutrition", "company_visit_air", "meeting_followup"])
def test_every_non_unseen_split_refuses_held_out_families(split: str, family: str) -> None:
    with pytest.raises(ConfigError, match="held-out families"):
        generate_tasks(2, split=split, families=[family])


def test_flights_built_on_first_use_match_the_full_table() -> None:
    from mcp_servers.toolenv.world import World

    lazy, full = World(7), World(7)
    number = lazy.flight_numbers[5]
    assert lazy.flight(number.lower()) == full.flights[number]
    assert lazy.flight_numbers == sorted(full.flights) and len(full.flights) == 360


def test_geocode_names_the_local_currency_a_hidden_need_converts_into() -> None:
    simulator = ToolEnv.builtin().simulator
    assert simulator.respond("maps/geocode", {"query": "Tokyo"})["currency"] == "JPY"
    task = next(
        t
        for t in generate_tasks(12, seed=0, split="train", families=["match_budget"])
        if len(t.calls) == 3
    )
    assert task.calls[2].bindings == {"to_currency": f"{task.calls[1].id}.currency"}

from __future__ import annotations

import gzip
import json
import random
from collections import Counter

import pytest

from mcp_servers.toolenv import ToolEnv, generate_tasks
from paraagent_runtime import model_facing_name
from paraagent_runtime.actions import META_TOOLS, parse_observations, parse_turn, render_turn
from paraagent_runtime.checker import check_answer
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.prompts import system_prompt
from training.demos import (
    DemoBuild,
    DemoConfig,
    Roles,
    build_demos,
    demonstrate,
    dependent_calls,
    load_demos,
    run_demos,
)
from training.demos.card import phrasing_of, provenance
from training.demos.dataset import balance
from training.demos.filters import assistant_turns
from training.demos.roles import (
    ScriptedPlanner,
    need_phrase,
    request_need,
    request_pieces,
    request_query,
)
from training.task_source import build_task_set


def _tasks_by_id(build: DemoBuild):
    tasks = generate_tasks(36, seed=3, split="train")
    return {task.id: task for task in tasks}


def test_every_demo_is_grammar_valid_and_parses_back(demo_build: DemoBuild) -> None:
    assert len(demo_build.demos) >= 12
    for demo in demo_build.demos:
        assistant = [m for m in demo.messages if m.role == "assistant"]
        assert demo.messages[0].role == "system" and demo.messages[1].role == "user"
        for message in assistant:
            turn = parse_turn(message.content, strict=True)
            assert turn.valid, (demo.id, turn.errors)
            assert render_turn(turn) == message.content
            assert turn.think
        assert parse_turn(assistant[-1].content, strict=True).is_final
        for message in demo.messages:
            if message.role == "tool":
                assert parse_observations(message.content)


def test_demos_use_the_runtime_system_prompt(demo_build: DemoBuild) -> None:
    assert demo_build.demos[0].messages[0].content == system_prompt(mode="paraact")


def test_answers_pass_the_checker_and_no_batch_has_dependent_calls(demo_build: DemoBuild) -> None:
    tasks = _tasks_by_id(demo_build)
    for demo in demo_build.demos:
        task = tasks[demo.task_id]
        assert check_answer(task, demo.answer or "").success
        assert dependent_calls(task, assistant_turns(demo.messages)) == []
        assert demo.tool_turns <= task.depth + 3


def test_execute_turns_batch_a_whole_ready_level(demo_build: DemoBuild) -> None:
    tasks = _tasks_by_id(demo_build)
    widest = 0
    for demo in demo_build.demos:
        if demo.recovery is not None:
            continue
        task = tasks[demo.task_id]
        widths = [len(t.calls) for t in assistant_turns(demo.messages) if t.phase == "execute"]
        assert widths == [len(level) for level in task.levels()]
        widest = max(widest, *widths)
    assert widest >= 2


def test_explore_turns_only_search_and_cards_are_real(demo_build: DemoBuild) -> None:
    for demo in demo_build.demos:
        loaded: set[str] = set()
        messages = demo.messages
        for index, message in enumerate(messages):
            if message.role != "assistant":
                continue
            turn = parse_turn(message.content, strict=True)
            if turn.phase == "explore":
                assert {call.name for call in turn.calls} <= META_TOOLS
                for block in parse_observations(messages[index + 1].content):
                    loaded.update(card["name"] for card in block.content)
            elif turn.phase == "execute":
                assert {call.name for call in turn.calls} <= loaded


def test_groups_are_balanced_and_styles_mixed(demo_build: DemoBuild) -> None:
    groups = Counter(demo.group for demo in demo_build.demos)
    assert set(groups) == {"G1", "G2", "G3"}
    assert max(groups.values()) - min(groups.values()) <= 1
    assert {demo.style for demo in demo_build.demos} == {"eager", "lazy"}
    assert any(demo.phase_switches >= 3 for demo in demo_build.demos)


def test_any_prefix_of_a_balanced_set_mixes_its_sources(demo_build: DemoBuild) -> None:
    # Catalog ids sort before built-in ones; a prefix (SFT's max_demos) must still mix both.
    builtin = [demo.model_copy(update={"recovery": None}) for demo in demo_build.demos]
    catalog = [
        demo.model_copy(update={"id": f"catalog-{i:03d}", "source": "catalog"})
        for i, demo in enumerate(builtin)
    ]
    kept = balance([*builtin, *catalog], n=None, max_recovered_share=0.0, seed=0, by_group=False)
    half = kept[: len(kept) // 2]
    assert {demo.source for demo in half} == {"builtin", "catalog"}
    assert kept == balance(
        [*catalog, *builtin], n=None, max_recovered_share=0.0, seed=0, by_group=False
    )


def test_recovered_demos_fail_then_recover(demo_build: DemoBuild) -> None:
    recovered = [demo for demo in demo_build.demos if demo.recovery is not None]
    assert recovered
    assert len(recovered) <= 0.2 * len(demo_build.demos) + 1
    for demo in recovered:
        observations = [m.content for m in demo.messages if m.role == "tool"]
        if demo.recovery == "bad_arguments":
            assert any('"invalid_arguments"' in text for text in observations)
        turns = assistant_turns(demo.messages)
        assert turns[-1].is_final
        assert demo.tool_turns == sum(1 for turn in turns if turn.calls)


def test_think_mentions_only_seen_tool_names(demo_build: DemoBuild) -> None:
    for demo in demo_build.demos:
        seen = demo.messages[1].content
        for message in demo.messages[2:]:
            if message.role == "assistant":
                think = parse_turn(message.content).think or ""
                for word in think.replace(",", " ").replace(":", " ").split():
                    if "__" in word:
                        assert word.strip(".;()") in seen, (demo.id, word)
            seen += message.content


def test_think_states_each_binding_once(demo_build: DemoBuild) -> None:
    bindings = 0
    for demo in demo_build.demos:
        for message in demo.messages:
            if message.role == "assistant":
                notes = [
                    note
                    for note in (parse_turn(message.content).think or "").split(". ")
                    if note.startswith("From ")
                ]
                bindings += len(notes)
                assert len(notes) == len(set(notes)), (demo.id, notes)
    assert bindings > 0


def test_card_counts_match(demo_build: DemoBuild) -> None:
    card = json.loads((demo_build.card_path.parent / "card.json").read_text())
    assert card["kept"]["count"] == len(demo_build.demos)
    assert card["candidates"] == demo_build.candidates == 36
    assert card["passed_filters"] + card["rejected"] == 36
    assert "privileged" in card["provenance"]
    assert demo_build.card_path.read_text().startswith("# ParaAct cold-start demonstrations")
    assert len(load_demos(demo_build.demos_path)) == len(demo_build.demos)


async def test_demos_are_deterministic(tmp_path) -> None:
    config = DemoConfig(n_tasks=6, seed=5, recovery_prob=0.5, output_dir=tmp_path)
    tasks = generate_tasks(6, seed=5)
    first = await run_demos(tasks, config)
    second = await run_demos(tasks, config)
    assert [d.model_dump(exclude={"id"}) for d in first] == [
        d.model_dump(exclude={"id"}) for d in second
    ]


@pytest.mark.parametrize("mode", ["react", "decoupled"])
async def test_baseline_modes(mode: str, tmp_path) -> None:
    config = DemoConfig(n_tasks=9, seed=1, mode=mode, recovery_prob=0.0, output_dir=tmp_path)
    demos = await run_demos(generate_tasks(9, seed=1), config)
    kept = [demo for demo in demos if demo.success]
    assert len(kept) == 9
    for demo in kept:
        turns = assistant_turns(demo.messages)
        if mode == "react":
            assert all(len(turn.calls) <= 1 and "<phase>" not in turn.text for turn in turns)
        else:
            phases = [turn.phase for turn in turns if turn.calls]
            assert phases == sorted(phases, key=lambda phase: phase == "execute")


async def test_verifier_refuses_an_answer_the_results_do_not_support() -> None:
    task = generate_tasks(1, seed=0, families=["city_pair_facts"])[0]
    wrong = [
        fact.model_copy(update={"value": 123456.0}) if isinstance(fact.value, float) else fact
        for fact in task.facts
    ]
    task = task.model_copy(update={"facts": wrong})
    env = ToolEnv.builtin()
    roles = Roles.scripted(
        {spec.id: spec for spec in env.specs()}, lazy_prob=0.0, recovery_prob=0.0
    )
    episode, state = await demonstrate(task, env, roles=roles, rng=random.Random(0))
    assert episode.status == "error"
    assert "results say" in (episode.error or "")
    assert state is not None and state.outputs  # the calls ran; only the answer was refused


def test_request_pieces_cut_sentences_and_clauses() -> None:
    assert request_pieces("Weather in Rome and Oslo? Also, the time in Lima.") == [
        "Weather in Rome",
        "Oslo?",
        "Also",
        "the time in Lima.",
    ]
    assert request_pieces("Rome, and the, Oslo") == ["Rome", "Oslo"]  # stop words only: dropped
    assert request_pieces("") == [""]


def test_request_need_repeats_the_piece_of_the_request_a_tool_serves() -> None:
    query = "Suggest a vegetarian dish and tell me the calories for 3 people."
    assert (
        request_need(query, "get_nutrition Nutrition facts: calories, protein, fat per serving.")
        == "tell me the calories for 3 people"
    )
    # the tool's words only choose the piece: none of them is written unless the request has it
    assert "nutrition" not in request_need(query, "get_nutrition Nutrition facts.")
    assert request_need(query, "lookup_zip Postal codes.") == "suggest a vegetarian dish"
    assert request_need("Fetch stock quotes: SHEL and KO.", "get_stock_quote stock price") == (
        "fetch stock quotes"
    )
    # a tool name's verb is no evidence: "get there" is not what get_current_time serves
    assert (
        request_need(
            "What will the weather be like when I get there, and what time is it there?",
            "get_current_time Current local time in a city.",
        )
        == "what time is it there"
    )


async def test_planned_needs_are_worded_from_the_request() -> None:
    specs = {spec.id: spec for spec in ToolEnv.builtin().specs()}
    planner = ScriptedPlanner(specs, lazy_prob=0.0, recovery_prob=0.0)
    tasks = generate_tasks(24, seed=5, split="train")
    hinted = 0
    for task in tasks:
        plan = await planner.plan(task, random.Random(0))
        for tool, need in plan.needs.items():
            kinds, _, piece = need.rpartition(": ")
            assert piece in task.query.lower(), (need, task.query)
            for kind in filter(None, kinds.split(", ")):
                hinted += 1
                key = kind.replace(" ", "_")
                assert any(
                    str(call.arguments.get(key, "")).lower() in task.query.lower()
                    for call in task.calls
                    if call.tool == tool and key in call.arguments
                ), (kind, task.query)
    assert hinted > 0  # flight numbers, tickers and names are named by what they are


async def test_description_needs_name_the_tool_and_retries_name_its_provider(tmp_path) -> None:
    specs = {spec.id: spec for spec in ToolEnv.builtin().specs()}
    task = generate_tasks(1, seed=2, split="train", families=["flight_arrival_weather"])[0]
    planner = ScriptedPlanner(specs, lazy_prob=0.0, recovery_prob=0.0, need_words="description")
    plan = await planner.plan(task, random.Random(0))
    assert plan.needs == {tool: need_phrase(specs[tool].description) for tool in task.tools}
    config = DemoConfig(
        n_tasks=12, seed=4, search_top_k=1, need_words="description", recovery_prob=0.0,
        output_dir=tmp_path,
    )  # fmt: skip
    demos = await run_demos(generate_tasks(12, seed=4, split="train"), config)
    descriptions = {need_phrase(spec.description) for spec in specs.values()}
    searches = [
        call.arguments["query"]
        for demo in demos
        for turn in assistant_turns(demo.messages)
        for call in turn.calls
        if call.name == "search_tools"
    ]
    retries = [query for query in searches if query.split()[0] in {"get", "search", "lookup"}]
    assert retries  # top_k 1 misses some tools, so some searches are retried
    providers = {tool.partition("/")[0] for tool in specs}
    assert all(set(query.split()) & providers for query in retries)
    firsts = [query for query in searches if query not in retries]
    assert all(
        any(set(query.split()) <= set(description.split()) for description in descriptions)
        for query in firsts
    )


async def test_request_first_search_opens_with_the_whole_request(tmp_path) -> None:
    config = DemoConfig(
        n_tasks=12, seed=4, search_top_k=8, first_search="request", recovery_prob=0.0,
        output_dir=tmp_path,
    )  # fmt: skip
    tasks = {task.id: task for task in generate_tasks(12, seed=4, split="train")}
    demos = await run_demos(list(tasks.values()), config)
    assert sum(demo.success for demo in demos) >= 9
    for demo in demos:
        first = assistant_turns(demo.messages)[0]
        assert [call.name for call in first.calls] == ["search_tools"]
        assert first.calls[0].arguments == {
            "query": request_query(tasks[demo.task_id].query),
            "top_k": 8,
        }
        later = [
            call.arguments["query"]
            for turn in assistant_turns(demo.messages)[1:]
            for call in turn.calls
            if call.name == "search_tools"
        ]
        assert request_query(tasks[demo.task_id].query) not in later
    assert request_query("What's the weather in Rome right now?") == "what's weather rome"
    assert "whole query" in provenance(config)
    assert "description" not in provenance(config)
    assert "description" in provenance(DemoConfig(need_words="description"))


async def test_source_notes_name_the_result_field_of_every_fact(tmp_path) -> None:
    config = DemoConfig(
        n_tasks=12, seed=4, answer_notes="sources", recovery_prob=0.0, output_dir=tmp_path
    )
    tasks = {task.id: task for task in generate_tasks(12, seed=4, split="train")}
    demos = [demo for demo in await run_demos(list(tasks.values()), config) if demo.success]
    assert len(demos) >= 9
    for demo in demos:
        task = tasks[demo.task_id]
        think = assistant_turns(demo.messages)[-1].think
        assert "…" not in think
        for fact in task.facts:
            node, _, path = fact.source.partition(".")
            tool = model_facing_name(next(c.tool for c in task.calls if c.id == node))
            assert f"{fact.label} = " in think and f" from {tool}" in think, (fact, think)
            assert f".{path}" in think
            repeated = sum(call.tool == task.calls[0].tool for call in task.calls) > 1
            if repeated and len(task.tools) == 1:  # e.g. one weather call per city
                assert f" from {tool}(" in think
            # the field named is in what that tool returned in this episode
            key = path.rsplit(".", 1)[-1].split("[")[0]
            assert any(
                f'"{key}"' in message.content and f'name="{tool}"' in message.content
                for message in demo.messages
                if message.role == "tool"
            ), (key, tool)
    assert "result field" in provenance(config)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("answer_notes", "all", "answer_notes"),
        ("need_words", "tool", "need_words"),
        ("first_search", "all", "first_search"),
        ("n_tasks", 0, "n_tasks"),
        ("n_demos", 0, "n_demos"),
        ("mode", "parallel", "mode"),
        ("search_top_k", 50, "search_top_k"),
        ("recovery_prob", 1.5, "recovery_prob"),
        ("families", ("no_such_family",), "families"),
        ("max_turns", 1, "max_turns"),
    ],
)
def test_demo_config_rejects_bad_values(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        DemoConfig(**{field: value})


async def test_build_demos_with_nothing_passing_raises(tmp_path) -> None:
    config = DemoConfig(
        n_tasks=2, turn_slack=0, max_turns=2, families=("trip_briefing",), output_dir=tmp_path
    )
    with pytest.raises(ConfigError, match="no demonstration passed"):
        await build_demos(config)


def test_load_demos_names_the_bad_line(tmp_path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_demos(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('\n{"id": 1}\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:2"):
        load_demos(bad)


def test_a_gzipped_demo_file_reads_as_the_plain_one(demo_build: DemoBuild, tmp_path) -> None:
    packed = tmp_path / "demos.jsonl.gz"
    packed.write_bytes(gzip.compress(demo_build.demos_path.read_bytes()))
    assert load_demos(packed) == load_demos(demo_build.demos_path)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[: packed.stat().st_size // 2])
    with pytest.raises(ConfigError, match=r"cut.jsonl.gz: unreadable after line \d+"):
        load_demos(cut)
    (tmp_path / "plain.jsonl.gz").write_text("not gzip")
    with pytest.raises(ConfigError, match="unreadable after line 0"):
        load_demos(tmp_path / "plain.jsonl.gz")


def test_mistake_turns_point_at_the_slip(demo_build: DemoBuild) -> None:
    recovered = [demo for demo in demo_build.demos if demo.recovery is not None]
    for demo in recovered:
        [index] = demo.mistake_turns
        turns = assistant_turns(demo.messages)
        assert turns[index].phase == "execute"
        assert all(turn.phase == "explore" for turn in turns[:index])
    assert all(not demo.mistake_turns for demo in demo_build.demos if demo.recovery is None)


async def test_mixed_demos_cover_catalog_providers_and_say_so_in_the_card(
    catalog_file, tmp_path
) -> None:
    source = {"kind": "mixed", "catalog_share": 0.5, "catalog": catalog_file, "distractors": 24}
    config = DemoConfig(
        n_tasks=6, seed=0, search_top_k=2, balance_groups=False, task_source=source,
        output_dir=tmp_path,
    )  # fmt: skip
    build = await build_demos(config)
    tasks = {
        task.id: task for task in build_task_set(config.task_source, 6, seed=0, split="train").tasks
    }
    catalog = [demo for demo in build.demos if demo.source == "catalog"]
    assert catalog and any(demo.source == "builtin" for demo in build.demos)
    for demo in catalog:
        task = tasks[demo.task_id]
        assert demo.family.startswith("catalog_") and demo.tools == task.tools
        assert demo.categories and check_answer(task, demo.answer or "").success
        called = {call.name for turn in assistant_turns(demo.messages) for call in turn.calls}
        assert {model_facing_name(tool) for tool in task.tools} <= called
    coverage = json.loads((tmp_path / "card.json").read_text())["kept"]["coverage"]
    assert coverage["by_source"] == dict(Counter(demo.source for demo in build.demos))
    assert coverage["tools"] == len({tool for demo in build.demos for tool in demo.tools})
    assert coverage["providers"] > 1 and 1 < coverage["phrasings"] <= len(build.demos)
    card = build.card_path.read_text()
    assert "task source: `mixed` (catalog share 0.5)" in card
    assert f"{coverage['providers']} providers, {coverage['categories']} categories" in card


async def test_preloaded_catalog_demos_call_at_once_without_searching(
    catalog_file, tmp_path
) -> None:
    source = {"kind": "catalog", "catalog": catalog_file, "preloaded_share": 1.0}
    config = DemoConfig(
        n_tasks=4, seed=1, balance_groups=False, recovery_prob=0.0, task_source=source,
        output_dir=tmp_path,
    )  # fmt: skip
    build = await build_demos(config)
    assert build.demos
    for demo in build.demos:
        assert "already loaded" in str(demo.messages[0].content)
        turns = assistant_turns(demo.messages)
        assert turns[0].phase == "execute"
        called = {call.name for turn in turns for call in turn.calls}
        assert called and not called & {"search_tools", "inspect_tool"}


def test_a_phrasing_masks_values_but_keeps_the_wording() -> None:
    first = phrasing_of("Weather in Paris and Tokyo for 3 days from 2025-06-01?")
    assert first == phrasing_of("Weather in Cairo and Lima for 10 days from 2026-01-31?")
    assert first != phrasing_of("What's the weather in Paris and Tokyo for 3 days?")

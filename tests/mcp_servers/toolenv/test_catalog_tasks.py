"""Catalog tasks over real botocore and Google discovery records: shapes, phrasing, splits."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from mcp_servers.toolenv import execute_gold
from mcp_servers.toolenv.arguments import sample_arguments
from mcp_servers.toolenv.catalog import build_catalog
from mcp_servers.toolenv.catalog_phrasing import FRAMES, action, field_phrase, service
from mcp_servers.toolenv.catalog_tasks import (
    CatalogHoldout,
    CatalogTaskGenerator,
    _link_keys,
    _norm,
    catalog_holdout,
    catalog_task_env,
    catalog_task_records,
    generate_catalog_tasks,
)
from mcp_servers.toolenv.catalog_values import (
    _COUNTRIES,
    _LANGUAGES,
    grounded_response,
    meaningful_fact,
)
from mcp_servers.toolenv.evaluation import EvalConfig, catalog_eval_setup, evaluate_toolenv
from mcp_servers.toolenv.oracle import oracle_policy
from mcp_servers.toolenv.records import ToolRecord
from paraagent_runtime.checker import check_answer
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.tasks import resolve_path

from ...catalog_fixture import small_real_sources

HOLDOUT = CatalogHoldout(categories=frozenset({"media"}), providers=frozenset({"aws_sqs"}))


@pytest.fixture(scope="module")
def real_records(tmp_path_factory: pytest.TempPathFactory) -> list[ToolRecord]:
    """~600 real records: AWS s3/sqs/dynamodb and Google dataproc (cloud), drive/tasks
    (productivity), youtube/books (media) and bigquery (analytics)."""
    sources = small_real_sources(tmp_path_factory.mktemp("catalog"))
    return list(build_catalog(sources, progress=False).records)


@pytest.fixture(scope="module")
def train_tasks(real_records: list[ToolRecord]):
    return generate_catalog_tasks(real_records, 9, seed=3, split="train", holdout=HOLDOUT)


def test_groups_shapes_and_pins(real_records: list[ToolRecord], train_tasks) -> None:
    by_id = {record.id: record for record in real_records}
    assert Counter(task.group for task in train_tasks) == {"G1": 3, "G2": 3, "G3": 3}
    for task in train_tasks:
        categories = {by_id[tool].category for tool in task.tools}
        assert task.facts and task.query.endswith((".", "?"))
        assert len(task.pinned) == len(task.calls)
        if task.group == "G1":
            assert len(task.tools) == 1 and task.depth == 1
        elif task.group == "G2":
            assert len(task.tools) >= 2 and len(categories) == 1 and task.depth == 1
            assert len({tool.split("/")[0] for tool in task.tools}) == 1
        else:
            assert len(categories) >= 2 and task.depth >= 2
            bound = [call for call in task.calls if call.bindings]
            assert bound, task.id
            for call in bound:
                ((argument, reference),) = call.bindings.items()
                # The field feeds an argument of its own specific name, or its parent's + it.
                assert _norm(argument) in _link_keys(reference.split(".", 1)[1])
        for fact in task.facts:
            assert not isinstance(fact.value, bool)


def test_generation_is_deterministic(real_records: list[ToolRecord], train_tasks) -> None:
    again = generate_catalog_tasks(real_records, 9, seed=3, split="train", holdout=HOLDOUT)
    assert [t.model_dump() for t in again] == [t.model_dump() for t in train_tasks]
    other = generate_catalog_tasks(real_records, 9, seed=4, split="train", holdout=HOLDOUT)
    assert [t.query for t in other] != [t.query for t in train_tasks]


def test_gold_replays_in_task_env_and_facts_come_from_outputs(
    real_records: list[ToolRecord], train_tasks
) -> None:
    for task in train_tasks:
        env = catalog_task_env(task, real_records, distractors=12)
        assert len(env.records) == len(task.tools) + 12
        outputs = execute_gold(task, env.simulator)
        pinned = {
            pin.tool + repr(sorted(pin.arguments.items())): pin.response for pin in task.pinned
        }
        for call in task.calls:
            assert outputs[call.id] == pinned[call.tool + repr(sorted(call.arguments.items()))]
        for fact in task.facts:
            assert resolve_path(outputs, fact.source) == fact.value
        assert check_answer(task, task.gold_answer).success


async def test_oracle_solves_catalog_tasks_through_the_agent(
    real_records: list[ToolRecord], train_tasks
) -> None:
    config = EvalConfig(modes=["paraact", "react"], n=len(train_tasks), distractors=24)
    report = await evaluate_toolenv(
        config,
        lambda task, mode: oracle_policy(
            task, mode, records=catalog_task_records(task, real_records)
        ),
        tasks=train_tasks,
        env_factory=lambda task: catalog_task_env(task, real_records, distractors=24),
    )
    by_mode = {summary.mode: summary for summary in report.summaries}
    assert by_mode["paraact"].success_rate == 1.0
    assert by_mode["react"].success_rate == 1.0
    # ParaAct reaches the gold critical path; ReAct needs one turn per call.
    assert by_mode["paraact"].mean_execute_turns == by_mode["paraact"].mean_gold_depth
    assert by_mode["react"].mean_turns > by_mode["paraact"].mean_turns


def test_held_out_splits_use_only_held_out_tools(real_records: list[ToolRecord]) -> None:
    by_id = {record.id: record for record in real_records}

    def tasks(n: int, split: str) -> list:
        return generate_catalog_tasks(
            real_records, n, seed=1, split=split, holdout=HOLDOUT, train_reference=n
        )

    seen, tools, cats = (
        tasks(6, "test-seen"),
        tasks(4, "test-unseen-tools"),
        tasks(4, "test-unseen-categories"),
    )
    for task in seen:
        assert all(HOLDOUT.split_of(by_id[t]) == "seen" for t in task.tools)
    for task in tools:
        assert {by_id[t].provider for t in task.tools} == {"aws_sqs"}
    for task in cats:
        assert {by_id[t].category for t in task.tools} == {"media"}


def test_hash_holdout_is_per_name(real_records: list[ToolRecord]) -> None:
    full = catalog_holdout(real_records, rate=0.5)
    part = catalog_holdout([r for r in real_records if r.provider != "aws_s3"], rate=0.5)
    assert part.categories <= full.categories
    assert part.providers <= full.providers
    assert catalog_holdout(real_records, rate=0.5) == full


def test_argument_sampler_honours_schema() -> None:
    record = ToolRecord(
        name="t",
        provider="p",
        input_schema={
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "day": {"type": "string", "format": "date"},
                "arn": {"type": "string", "pattern": r"^arn:aws:iam::\d{12}:role/[a-z]+$"},
                "region": {"type": "string", "description": "The region, e.g. 'ap-south-1'."},
                "count": {"type": "integer", "minimum": 5, "maximum": 9},
                "tags": {"type": "array", "items": {"type": "string"}},
                "optional": {"type": "string"},
            },
            "required": ["mode", "day", "arn", "region", "count", "tags"],
        },
    )
    first = sample_arguments(record, random.Random(7))
    assert first == sample_arguments(record, random.Random(7))
    assert first is not None and "optional" not in first
    assert first["mode"] in ("fast", "slow") and first["region"] == "ap-south-1"
    assert 5 <= first["count"] <= 9 and len(first["day"]) == 10
    assert first["arn"].startswith("arn:aws:iam::")


def test_argument_sampler_gives_up_on_unsatisfiable_schemas() -> None:
    impossible = ToolRecord(
        name="t",
        provider="p",
        input_schema={
            "type": "object",
            "properties": {"x": {"$ref": "#/definitions/X"}},
            "required": ["x"],
        },
    )
    assert sample_arguments(impossible, random.Random(0)) is None


def test_bad_inputs_raise_config_errors(real_records: list[ToolRecord], train_tasks) -> None:
    with pytest.raises(ConfigError, match="groups"):
        generate_catalog_tasks(real_records, 1, groups=["G9"], holdout=HOLDOUT)
    with pytest.raises(ConfigError, match="n >= 0"):
        generate_catalog_tasks(real_records, -1, holdout=HOLDOUT)
    with pytest.raises(ConfigError, match="no usable"):
        CatalogTaskGenerator(
            real_records,
            split="test-unseen-tools",
            holdout=CatalogHoldout(categories=frozenset(), providers=frozenset({"nobody"})),
        )
    with pytest.raises(ConfigError, match="cannot fill"):
        generate_catalog_tasks(
            real_records,
            2,
            split="test-unseen-tools",
            groups=["G3"],
            holdout=HOLDOUT,
            train_reference=2,
        )
    with pytest.raises(ConfigError, match="holdout rate"):
        catalog_holdout(real_records, rate=1.5)
    with pytest.raises(ConfigError, match="missing from the catalog"):
        catalog_task_records(train_tasks[0], real_records[:0])
    with pytest.raises(ConfigError, match="--catalog"):
        EvalConfig(catalog="everything")
    with pytest.raises(ConfigError, match="--distractors"):
        EvalConfig(distractors=-1)


def test_catalog_eval_setup_builds_tasks_and_envs(real_records: list[ToolRecord]) -> None:
    config = EvalConfig(catalog="full", n=3, split="test-seen", distractors=5)
    tasks, factory = catalog_eval_setup(config, real_records)
    assert len(tasks) == 3 and all(task.family.startswith("catalog_g") for task in tasks)
    env = factory(tasks[0])
    assert set(tasks[0].tools) <= {record.id for record in env.records}


def test_queries_read_like_requests_never_naming_tools_or_argument_keys(
    real_records: list[ToolRecord], train_tasks
) -> None:
    by_id = {record.id: record for record in real_records}
    for task in train_tasks:
        assert not re.search(r"\buse [a-z]+(_|[A-Z])", task.query), task.query
        assert " with id " not in task.query.lower()
        for call in task.calls:
            name = by_id[call.tool].name
            assert name not in task.query, (name, task.query)
            assert all(f"{key} '" not in task.query for key in call.arguments)
        assert service(by_id[task.tools[0]].provider) in task.query


def test_facts_mean_something(real_records: list[ToolRecord], train_tasks) -> None:
    for task in train_tasks:
        for fact in task.facts:
            path = fact.source.split(".", 1)[1]
            assert meaningful_fact(path, fact.value, set()), fact
            assert not re.fullmatch(r".+_[a-z]+_\d{3}", str(fact.value)), fact
            assert fact.label == field_phrase(path)


def test_grounded_responses_replace_placeholders_by_field_kind() -> None:
    record = ToolRecord(
        name="get_trip",
        provider="trips",
        output_schema={
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "organizer": {"type": "string"},
                "status": {"type": "string"},
                "tripId": {"type": "string"},
            },
            "required": ["city", "organizer", "status", "tripId"],
        },
    )
    response = grounded_response(record, {}, seed=1)
    assert response == grounded_response(record, {}, seed=1)
    assert " " in response["organizer"] and "_" not in response["city"]
    assert not meaningful_fact("tripId", response["tripId"], set())
    assert meaningful_fact("status", response["status"], set())
    assert not meaningful_fact("organizer", "organizer_nova_313", set())


def test_actions_come_from_descriptions() -> None:
    def act(description: str, name: str = "Op") -> str:
        return action(ToolRecord(name=name, provider="p", description=description))

    assert act("Gets the template for a stack.") == "get the template for a stack"
    assert act("The DeleteTable operation deletes a table and all of its items.") == (
        "delete a table and all of its items"
    )
    assert act("Music Export Tracks") == "look up the music export tracks"
    assert act("This operation is not supported.", name="GetBucketPolicy") == "get bucket policy"


def test_test_splits_use_their_own_frames_and_share_nothing_with_train(
    real_records: list[ToolRecord], train_tasks
) -> None:
    for seen, test in FRAMES.values():
        assert not set(seen) & set(test)
    dev = generate_catalog_tasks(
        real_records, 6, seed=3, split="dev", holdout=HOLDOUT, train_reference=9
    )
    test = generate_catalog_tasks(
        real_records, 6, seed=3, split="test-seen", holdout=HOLDOUT, train_reference=9
    )
    taken = {t.query for t in train_tasks} | {t.gold_answer for t in train_tasks}
    for task in dev + test:
        assert task.query not in taken and task.gold_answer not in taken
    assert {t.split for t in dev} == {"dev"} and {t.split for t in test} == {"test-seen"}


def test_providers_are_held_out_whole() -> None:
    records = [
        ToolRecord(name="a", provider="mixed", category="held"),
        ToolRecord(name="b", provider="mixed", category="kept"),
        ToolRecord(name="c", provider="plain", category="kept"),
    ]
    holdout = CatalogHoldout(
        categories=frozenset({"held"}), providers=frozenset(), excluded=frozenset({"mixed"})
    )
    assert [holdout.split_of(record) for record in records] == ["excluded", "excluded", "seen"]
    real = catalog_holdout(records, rate=0.999)
    assert real.categories == {"held", "kept"} and not real.excluded


def test_distractors_include_same_named_operations_of_other_providers(
    real_records: list[ToolRecord], train_tasks
) -> None:
    task = next(t for t in train_tasks if t.group == "G1")
    env = catalog_task_env(task, real_records, distractors=30)
    gold_providers = {tool.split("/")[0] for tool in task.tools}
    assert any(record.provider not in gold_providers for record in env.records)
    assert len({record.provider for record in env.records}) >= 3


def test_a_name_is_grounded_by_what_it_names() -> None:
    country = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    record = ToolRecord(
        name="get_language",
        provider="langs",
        output_schema={
            "type": "object",
            "properties": {"name": {"type": "string"}, "country": country},
            "required": ["name", "country"],
        },
    )
    for seed in range(5):
        response = grounded_response(record, {}, seed=seed)
        # Top-level fields belong to the operation's object (a language); nested ones to theirs.
        assert response["name"] in _LANGUAGES and response["country"]["name"] in _COUNTRIES


def test_no_gold_call_is_drawn_twice_or_left_unused(real_records: list[ToolRecord]) -> None:
    tasks = generate_catalog_tasks(real_records, 60, seed=1, split="train", holdout=HOLDOUT)
    for task in tasks:
        calls = [(call.tool, repr(sorted(call.arguments.items()))) for call in task.calls]
        assert len(calls) == len(set(calls)), task.id
        assert len(task.pinned) == len(task.calls), task.id

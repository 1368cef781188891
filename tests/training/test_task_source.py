"""Task sources for training: built-in families, the real catalog, and a mix of both."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mcp_servers.toolenv.catalog.store import read_catalog
from mcp_servers.toolenv.catalog_tasks import CatalogHoldout, generate_catalog_tasks
from paraagent_runtime import TEST_SPLITS, save_tasks
from paraagent_runtime.errors import ConfigError
from training.config import load_config
from training.demos import DemoConfig
from training.rl import RLConfig
from training.task_source import TaskSet, TaskSource, build_task_set, is_catalog_task

CONFIGS = Path(__file__).resolve().parents[2] / "training" / "configs"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"kind": "world"}, "task_source.kind"),
        ({"catalog_share": 1.5}, "catalog_share"),
        ({"groups": ["G4"]}, "task_source.groups"),
        ({"distractors": -1}, "distractors"),
        ({"preloaded_share": -0.1}, "preloaded_share"),
        ({"preloaded_distractors": -1}, "preloaded_distractors"),
    ],
)
def test_bad_task_sources_are_refused(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TaskSource(**values)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=message):
        DemoConfig(task_source=values)  # type: ignore[arg-type]


def test_config_files_give_a_mapping_and_unknown_fields_are_named(tmp_path: Path) -> None:
    path = tmp_path / "rl.yaml"
    path.write_text("task_source: {kind: mixed, catalog_share: 0.25}\n")
    assert load_config(RLConfig, path).task_source == TaskSource(kind="mixed", catalog_share=0.25)
    with pytest.raises(ConfigError, match="RLConfig.task_source: unknown field.*shares"):
        RLConfig(task_source={"shares": 0.5})  # type: ignore[arg-type]
    assert [TaskSource(kind=kind).catalog_count(10) for kind in ("builtin", "catalog")] == [0, 10]
    assert TaskSource(kind="mixed", catalog_share=0.3).catalog_count(10) == 3


def test_mixed_task_sets_draw_both_kinds_and_run_each_in_its_own_world(catalog_file: Path) -> None:
    source = TaskSource(kind="mixed", catalog_share=0.5, catalog=catalog_file, distractors=12)
    task_set = build_task_set(source, 8, seed=1, split="train")
    catalog = [task for task in task_set.tasks if is_catalog_task(task)]
    assert len(task_set.tasks) == 8 and len(catalog) == 4
    assert {task.split for task in task_set.tasks} == {"train"}
    assert Counter(task.group for task in catalog) == {"G1": 2, "G2": 1, "G3": 1}
    # Shuffled together, not one block after the other.
    kinds = [is_catalog_task(task) for task in task_set.tasks]
    assert kinds not in ([False] * 4 + [True] * 4, [True] * 4 + [False] * 4)
    again = build_task_set(source, 8, seed=1, split="train")
    assert [task.id for task in again.tasks] == [task.id for task in task_set.tasks]

    task = catalog[0]
    env = task_set.env_for(task)
    names = {record.id for record in env.records}
    assert set(task.tools) <= names and len(names) == len(task.tools) + 12
    assert env.seed == task.seed
    builtin = next(task for task in task_set.tasks if not is_catalog_task(task))
    assert set(builtin.tools) <= {record.id for record in task_set.env_for(builtin).records}


def test_a_preloaded_share_of_catalog_tasks_gets_few_distractors(catalog_file: Path) -> None:
    source = TaskSource(
        kind="catalog", catalog=catalog_file, distractors=40, preloaded_share=0.5,
        preloaded_distractors=2,
    )  # fmt: skip
    task_set = build_task_set(source, 12, seed=2, split="train")
    sizes = [len(task_set.env_for(task).records) - len(task.tools) for task in task_set.tasks]
    assert set(sizes) == {2, 40}
    assert sizes == [source.distractors_for(task) for task in task_set.tasks]
    assert {TaskSource(kind="catalog", preloaded_share=share).distractors_for(task_set.tasks[0])
            for share in (0.0, 1.0)} == {48, 12}  # fmt: skip


def test_a_catalog_task_set_loads_the_catalog_only_when_a_catalog_task_needs_it(
    tmp_path: Path,
) -> None:
    missing = TaskSource(kind="catalog", catalog=tmp_path / "none.jsonl.gz")
    builtin_only = build_task_set(TaskSource(kind="builtin"), 3, seed=0, split="dev")
    lazy = TaskSet(builtin_only.tasks, missing)
    assert [lazy.env_for(task).seed for task in lazy.tasks] == [t.seed for t in lazy.tasks]
    with pytest.raises(ConfigError):
        build_task_set(missing, 2, seed=0, split="train")


@pytest.mark.parametrize("split", TEST_SPLITS)
def test_catalog_sources_obey_the_test_split_guards(
    split: str, catalog_file: Path, tmp_path: Path
) -> None:
    source = {"kind": "catalog", "catalog": str(catalog_file)}
    with pytest.raises(ConfigError, match="test split"):
        DemoConfig(split=split, task_source=source)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="RLConfig.task_split"):
        RLConfig(task_split=split, task_source=source)  # type: ignore[arg-type]
    holdout = CatalogHoldout(categories=frozenset({"media"}), providers=frozenset({"aws_sqs"}))
    records = read_catalog(catalog_file).records
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks(generate_catalog_tasks(records, 1, seed=0, split=split, holdout=holdout), tasks_file)
    with pytest.raises(ConfigError, match="tasks_file"):
        RLConfig(tasks_file=tasks_file, task_source=source).training_tasks()  # type: ignore[arg-type]


def test_rl_generates_catalog_tasks_of_its_split(catalog_file: Path) -> None:
    config = RLConfig(
        n_tasks=3, task_split="dev", task_source={"kind": "catalog", "catalog": catalog_file}
    )  # type: ignore[arg-type]
    tasks = config.training_tasks()
    assert len(tasks) == 3 and all(is_catalog_task(t) and t.split == "dev" for t in tasks)

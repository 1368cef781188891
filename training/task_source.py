"""Where training tasks come from: the built-in families, the real catalog, or a mix of both.

Demos and RL draw their tasks through :class:`TaskSource` (a nested config) and run each task in
the environment :meth:`TaskSet.env_for` builds: built-in tasks in the built-in catalog's world of
the task, catalog tasks over their gold tools plus the catalog task generator's distractors
(:func:`~mcp_servers.toolenv.catalog_tasks.catalog_task_env`). Catalog tasks obey the same split
rules as built-in ones: the split label picks seen or held-out providers and categories, and the
configs that own a :class:`TaskSource` refuse test splits.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_servers.toolenv import ToolEnv, generate_tasks
from mcp_servers.toolenv.catalog_tasks import (
    CATALOG_GROUPS,
    catalog_task_env,
    generate_catalog_tasks,
)
from mcp_servers.toolenv.records import ToolRecord
from mcp_servers.toolenv.tasks import ALL_FAMILIES
from paraagent_runtime import ConfigError, Task

from .config import option

__all__ = ["TASK_SOURCES", "TaskSet", "TaskSource", "build_task_set", "is_catalog_task"]

TASK_SOURCES: tuple[str, ...] = ("builtin", "catalog", "mixed")
"""``builtin``: the hand-written families; ``catalog``: tasks over the real catalog; ``mixed``:
both, ``catalog_share`` of them from the catalog."""


@dataclass
class TaskSource:
    """Which tasks a training stage draws (a mapping under ``task_source:`` in config files)."""

    kind: str = option("builtin", help="builtin, catalog or mixed (see catalog_share).")
    catalog_share: float = option(
        0.5, help="mixed: share of the tasks drawn from the catalog (the rest are built-in)."
    )
    catalog: Path | None = option(
        None,
        help="A ToolEnv catalog file (None: the cached build of the default sources, built "
        "when missing: `paraagent toolenv catalog build`).",
    )
    groups: tuple[str, ...] = option(CATALOG_GROUPS, help="Catalog task groups to cycle through.")
    distractors: int = option(
        48, help="Non-gold catalog tools in each catalog task's toolspace (search must pick)."
    )
    preloaded_share: float = option(
        0.0,
        help="Share of the catalog tasks whose toolspace is small enough to be preloaded (every "
        "tool listed with its schema from the start: no search, call at once).",
    )
    preloaded_distractors: int = option(
        12, help="Non-gold tools in a preloaded catalog task's toolspace."
    )

    def __post_init__(self) -> None:
        if self.kind not in TASK_SOURCES:
            raise ConfigError(
                f"task_source.kind: unknown {self.kind!r}; use one of {', '.join(TASK_SOURCES)}"
            )
        for name in ("catalog_share", "preloaded_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(
                    f"task_source.{name}: must be within [0, 1], got {getattr(self, name)}"
                )
        self.groups = tuple(self.groups)
        unknown = [group for group in self.groups if group not in CATALOG_GROUPS]
        if unknown or not self.groups:
            raise ConfigError(
                f"task_source.groups: unknown {unknown or '(empty list)'}; "
                f"choose from {', '.join(CATALOG_GROUPS)}"
            )
        for name in ("distractors", "preloaded_distractors"):
            if getattr(self, name) < 0:
                raise ConfigError(f"task_source.{name}: must be >= 0, got {getattr(self, name)}")
        if self.catalog is not None:
            self.catalog = Path(self.catalog)

    @classmethod
    def of(cls, value: Any, *, owner: str) -> TaskSource:
        """``value`` as a :class:`TaskSource` (config files give a mapping of its fields).

        Raises:
            ConfigError: ``value`` is not a mapping, names an unknown field, or fails validation.
        """
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise ConfigError(f"{owner}: must be a mapping of TaskSource fields, got {value!r}")
        known = {item.name for item in dataclasses.fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ConfigError(
                f"{owner}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return cls(**value)

    def catalog_count(self, n: int) -> int:
        """How many of ``n`` tasks come from the catalog."""
        if self.kind == "builtin":
            return 0
        return n if self.kind == "catalog" else round(n * self.catalog_share)

    def distractors_for(self, task: Task) -> int:
        """How many distractors the catalog task ``task`` gets.

        ``preloaded_distractors`` when ``task`` is drawn (by its id, a share of
        ``preloaded_share``) to be a preloaded task, ``distractors`` otherwise.
        """
        draw = random.Random(f"preloaded:{task.id}:{task.seed}").random()
        return self.preloaded_distractors if draw < self.preloaded_share else self.distractors


def is_catalog_task(task: Task) -> bool:
    """Whether ``task`` is a catalog task (not of a built-in family)."""
    return task.family not in ALL_FAMILIES


class TaskSet:
    """Tasks with the environment each runs in.

    Args:
        tasks: The tasks (built-in and catalog ones in any order).
        source: Where the catalog comes from and how many distractors a catalog task gets.
        failure_rate: Injected transient failure rate per call attempt, in every environment.
        records: The catalog the catalog tasks were generated from (default: loaded from
            ``source.catalog`` the first time a catalog task needs its environment).
    """

    def __init__(
        self,
        tasks: Sequence[Task],
        source: TaskSource,
        *,
        failure_rate: float = 0.0,
        records: Sequence[ToolRecord] | None = None,
    ) -> None:
        self.tasks = list(tasks)
        self.source = source
        self.failure_rate = failure_rate
        self._records = records
        self._builtin: ToolEnv | None = None

    @property
    def records(self) -> Sequence[ToolRecord]:
        """The catalog's records (loaded once, on first use)."""
        if self._records is None:
            self._records = load_records(self.source.catalog)
        return self._records

    def env_for(self, task: Task) -> ToolEnv:
        """A fresh environment in ``task``'s world (its pinned responses included)."""
        if is_catalog_task(task):
            return catalog_task_env(
                task,
                self.records,
                distractors=self.source.distractors_for(task),
                failure_rate=self.failure_rate,
            )
        if self._builtin is None:
            self._builtin = ToolEnv.builtin(failure_rate=self.failure_rate)
        return self._builtin.for_task(task)


def load_records(path: Path | None) -> Sequence[ToolRecord]:
    """The records of the catalog file ``path`` (``None``: the default sources' cached build).

    Raises:
        ConfigError: the file is unusable, or a default source is missing.
    """
    from mcp_servers.toolenv.catalog import load_catalog

    return load_catalog(path, progress=False).records


def build_task_set(
    source: TaskSource,
    n: int,
    *,
    seed: int,
    split: str,
    families: Sequence[str] | None = None,
    failure_rate: float = 0.0,
    records: Sequence[ToolRecord] | None = None,
) -> TaskSet:
    """``n`` tasks of ``split`` from ``source``, shuffled together when mixed.

    Built-in tasks come from :func:`~mcp_servers.toolenv.generate_tasks` (``families`` limits
    them), catalog tasks from :func:`~mcp_servers.toolenv.catalog_tasks.generate_catalog_tasks`
    with the same seed and split.

    Raises:
        ConfigError: a generator cannot fill its share (e.g. no usable catalog tool in the split).
    """
    n_catalog = source.catalog_count(n)
    tasks = (
        generate_tasks(n - n_catalog, seed=seed, split=split, families=families)
        if n > n_catalog
        else []
    )
    task_set = TaskSet(tasks, source, failure_rate=failure_rate, records=records)
    if n_catalog:
        task_set.tasks += generate_catalog_tasks(
            task_set.records, n_catalog, seed=seed, split=split, groups=source.groups
        )
        if len(task_set.tasks) > n_catalog:
            random.Random(f"task-mix:{seed}:{split}").shuffle(task_set.tasks)
    return task_set

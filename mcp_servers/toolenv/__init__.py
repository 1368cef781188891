"""ToolEnv: a deterministic, seeded simulator of real-world tool APIs, with tasks and an MCP face.

Quick start::

    env = ToolEnv.builtin(seed=0)                  # 69 built-in tools over 14 providers
    toolspace = Toolspace(env.sources)             # one source per provider: weather__get_forecast…
    task = builtin_tasks()[0]
    task_env = env.for_task(task)                  # the task's world and pinned responses
    check_answer(task, "…final answer…")           # from paraagent_runtime: CheckResult(…)

The task contract (``Task``, ``GoldCall``, ``AnswerFact``, ``check_answer``, ``load_tasks``…)
lives in :mod:`paraagent_runtime`; ToolEnv generates tasks and replays them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paraagent_runtime.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .builtin import builtin_handlers, builtin_records
    from .catalog_tasks import (
        CatalogHoldout,
        CatalogTaskGenerator,
        catalog_holdout,
        catalog_task_env,
        generate_catalog_tasks,
    )
    from .errors import (
        ToolEnvArgumentError,
        ToolEnvError,
        ToolEnvHTTPError,
        ToolEnvNotFoundError,
        ToolEnvTimeoutError,
        ToolEnvTransientError,
        ToolEnvTruncatedError,
        ToolEnvUnknownToolError,
    )
    from .llm_simulator import LLMResponseCache, LLMSimulator
    from .records import ToolRecord
    from .simulator import LatencyModel, ToolEnvSimulator
    from .source import ToolEnv, ToolEnvSource, toolenv_sources
    from .tasks import builtin_tasks, execute_gold, generate_tasks
    from .world import World

__all__ = [
    "CatalogHoldout",
    "CatalogTaskGenerator",
    "LLMResponseCache",
    "LLMSimulator",
    "LatencyModel",
    "ToolEnv",
    "ToolEnvArgumentError",
    "ToolEnvError",
    "ToolEnvHTTPError",
    "ToolEnvNotFoundError",
    "ToolEnvSimulator",
    "ToolEnvSource",
    "ToolEnvTimeoutError",
    "ToolEnvTransientError",
    "ToolEnvTruncatedError",
    "ToolEnvUnknownToolError",
    "ToolRecord",
    "World",
    "builtin_handlers",
    "builtin_records",
    "builtin_tasks",
    "catalog_holdout",
    "catalog_task_env",
    "execute_gold",
    "generate_catalog_tasks",
    "generate_tasks",
    "toolenv_sources",
]

_WHERE: dict[str, str] = {
    "CatalogHoldout": "catalog_tasks",
    "CatalogTaskGenerator": "catalog_tasks",
    "LLMResponseCache": "llm_simulator",
    "LLMSimulator": "llm_simulator",
    "LatencyModel": "simulator",
    "ToolEnv": "source",
    "ToolEnvArgumentError": "errors",
    "ToolEnvError": "errors",
    "ToolEnvHTTPError": "errors",
    "ToolEnvNotFoundError": "errors",
    "ToolEnvSimulator": "simulator",
    "ToolEnvSource": "source",
    "ToolEnvTimeoutError": "errors",
    "ToolEnvTransientError": "errors",
    "ToolEnvTruncatedError": "errors",
    "ToolEnvUnknownToolError": "errors",
    "ToolRecord": "records",
    "World": "world",
    "builtin_handlers": "builtin",
    "builtin_records": "builtin",
    "builtin_tasks": "tasks",
    "catalog_holdout": "catalog_tasks",
    "catalog_task_env": "catalog_tasks",
    "execute_gold": "tasks",
    "generate_catalog_tasks": "catalog_tasks",
    "generate_tasks": "tasks",
    "toolenv_sources": "source",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)

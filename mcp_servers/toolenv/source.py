"""ToolEnv as runtime tool sources: one :class:`ToolSource` per provider over a shared simulator."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from paraagent_runtime import PinnedResponse, Task, ToolSource, ToolSpec

from .builtin import Handler, builtin_records
from .records import ToolRecord
from .simulator import FAILURE_KINDS, FailureKind, LatencyModel, ToolEnvSimulator

if TYPE_CHECKING:
    from .llm_simulator import LLMSimulator

__all__ = ["ToolEnv", "ToolEnvSource", "toolenv_sources"]


class ToolEnvSource:
    """The tools of one provider, served by a (shared) :class:`ToolEnvSimulator`.

    Its tools always keep their ``<provider>__<tool>`` names (``prefixed_names``): providers share
    tool names, and tasks, gold call DAGs, the oracle, demos and trained models use those names.

    Args:
        simulator: The simulator answering calls.
        provider: The provider name; it is also the source name (``weather__get_forecast``).
    """

    prefixed_names = True

    def __init__(self, simulator: ToolEnvSimulator, provider: str) -> None:
        self.name = provider
        self.simulator = simulator
        self._specs = [record.to_spec() for record in simulator.records_for(provider)]

    async def list_tools(self) -> list[ToolSpec]:
        """The provider's tools as runtime specs."""
        return list(self._specs)

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Answer a call through the simulator (raises ToolEnv errors on failure)."""
        return await self.simulator.call(self.name, tool, arguments)

    async def aclose(self) -> None:
        """Nothing to release: the simulator lives in-process."""


def toolenv_sources(simulator: ToolEnvSimulator) -> list[ToolSource]:
    """One tool source per provider of ``simulator``, all sharing it."""
    return [ToolEnvSource(simulator, provider) for provider in simulator.providers]


class ToolEnv:
    """A catalog, its simulator and its tool sources, bundled.

    Args:
        records: The catalog to serve.
        seed: The world seed.
        failure_rate: Injected failure probability per call attempt (0 = off).
        failure_kinds: Which failures to inject.
        latency: Seeded latency model, or ``None`` for instant answers.
        handlers: Handlers by tool id (defaults to the built-in handlers).
        pinned: Responses fixed for exact calls.
        llm: Optional LLM simulation for tools without a handler (kept by :meth:`for_task`).
    """

    def __init__(
        self,
        records: Iterable[ToolRecord],
        *,
        seed: int = 0,
        failure_rate: float = 0.0,
        failure_kinds: Iterable[FailureKind] = FAILURE_KINDS,
        latency: LatencyModel | None = None,
        handlers: Mapping[str, Handler] | None = None,
        pinned: Iterable[PinnedResponse] = (),
        llm: LLMSimulator | None = None,
    ) -> None:
        self.records = list(records)
        self._options: dict[str, Any] = {
            "failure_rate": failure_rate,
            "failure_kinds": tuple(failure_kinds),
            "latency": latency,
            "handlers": handlers,
            "llm": llm,
        }
        self.simulator = ToolEnvSimulator(self.records, seed=seed, pinned=pinned, **self._options)
        self.sources: list[ToolSource] = toolenv_sources(self.simulator)

    @classmethod
    def builtin(cls, seed: int = 0, **options: Any) -> ToolEnv:
        """The built-in catalog (with its handlers) in the world of ``seed``."""
        return cls(builtin_records(), seed=seed, **options)

    @property
    def seed(self) -> int:
        """The world seed."""
        return self.simulator.seed

    def specs(self) -> list[ToolSpec]:
        """Runtime specs of every tool in the catalog."""
        return [record.to_spec() for record in self.records]

    def with_seed(self, seed: int, *, pinned: Iterable[PinnedResponse] = ()) -> ToolEnv:
        """A fresh environment over the same catalog and options in another world."""
        return ToolEnv(self.records, seed=seed, pinned=pinned, **self._options)

    def for_task(self, task: Task) -> ToolEnv:
        """A fresh environment in the task's world with its pinned responses.

        Every rollout of one task sees the same world; rollouts do not share attempt counters
        or the mutation log.
        """
        return self.with_seed(task.seed, pinned=task.pinned)

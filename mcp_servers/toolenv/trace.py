"""Building a gold call DAG by executing it: the trace every task family writes into.

A family calls tools through a :class:`Trace`; each call is answered at once by the simulator, so
later calls can bind their arguments to earlier outputs and answer facts are read from outputs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from paraagent_runtime import AnswerFact, GoldCall, resolve_binding, resolve_path
from paraagent_runtime.tasks import Group

from .simulator import ToolEnvSimulator

__all__ = ["Family", "RetryTask", "Trace", "join_and", "pick"]


class RetryTask(Exception):
    """A family drew entities that make no task (an empty search, a key of another split)."""


class Trace:
    """Builds a gold DAG by executing it: each call is answered at once so later calls can bind.

    Args:
        simulator: The simulator of the task's world.
        split: The split the task is drawn for (families choose their phrasing pool by it).
        style: A random stream for surface variation only (dates, amounts, currency words); it
            is separate from the family's stream so phrasing never changes which entities a
            task draws.
    """

    def __init__(
        self,
        simulator: ToolEnvSimulator,
        *,
        split: str = "train",
        style: random.Random | None = None,
    ) -> None:
        self.simulator = simulator
        self.world = simulator.world
        self.split = split
        self.style = style or random.Random(f"style:{simulator.world.seed}")
        self.calls: list[GoldCall] = []
        self.outputs: dict[str, Any] = {}
        self.facts: list[AnswerFact] = []

    def call(self, tool: str, arguments: dict[str, Any], bind: dict[str, str] | None = None) -> str:
        """Call ``tool`` now (``bind``: argument → ``"<node>.<path>"``) and record the node."""
        node = f"n{len(self.calls) + 1}"
        bind = bind or {}
        full = {
            **arguments,
            **{name: resolve_binding(self.outputs, ref) for name, ref in bind.items()},
        }
        self.outputs[node] = self.simulator.respond(tool, full)
        depends = sorted(
            {ref.strip("[").split(".", 1)[0] for ref in bind.values()}, key=lambda n: int(n[1:])
        )
        self.calls.append(
            GoldCall(id=node, tool=tool, arguments=full, depends_on=depends, bindings=bind)
        )
        return node

    def discard_last(self) -> None:
        """Drop the last call and its output: a draw the task will not use must not stay gold.

        Raises:
            ValueError: The last call already feeds a recorded answer fact.
        """
        node = self.calls[-1].id
        if any(fact.source.split(".", 1)[0] == node for fact in self.facts):
            raise ValueError(f"{node} feeds an answer fact; it cannot be discarded")
        self.calls.pop()
        del self.outputs[node]

    def get(self, reference: str) -> Any:
        """The value at ``"<node>.<path>"`` in the outputs so far."""
        return resolve_path(self.outputs, reference)

    def fact(self, reference: str, label: str, *, tolerance: float | None = None) -> Any:
        """Record the value at ``reference`` as an answer fact and return it."""
        value = self.get(reference)
        self.facts.append(
            AnswerFact(value=value, label=label, source=reference, tolerance=tolerance)
        )
        return value

    def group(self) -> Group:
        """G1 (one tool), G2 (one category) or G3 (several categories)."""
        tools = {call.tool for call in self.calls}
        if len(tools) == 1:
            return "G1"
        categories = {self.simulator.record(tool).category for tool in tools}
        return "G2" if len(categories) == 1 else "G3"


Family = Callable[[Trace, random.Random], tuple[str, str]]
"""Builds one task in a trace; returns ``(query, gold answer text)``."""


def join_and(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def pick(rng: random.Random, options: Sequence[str]) -> str:
    """One of ``options``; a single option draws nothing from ``rng``."""
    return options[rng.randrange(len(options))] if len(options) > 1 else options[0]

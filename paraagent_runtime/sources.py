"""Tool sources: anything that lists tools and executes calls (MCP servers, ToolEnv, functions).

A source speaks in its *own* tool names (the part after ``/`` in a tool id); the toolspace maps
model-facing names to sources. Sources raise on failure; the dispatcher turns exceptions into
typed error observations, so a source never needs to build error results itself.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

from .concurrency import run_sync
from .naming import tool_id
from .tools import ToolAnnotations, ToolSpec

__all__ = ["FunctionTool", "FunctionToolSource", "ToolSource", "bounding_calls", "call_bound"]

_bound: ContextVar[float | None] = ContextVar("paraagent_call_bound", default=None)


def call_bound() -> float | None:
    """The time limit (seconds) the dispatcher holds the call running in this task to, if any.

    A source whose own limit is no shorter need not start a timer of its own: one timer per call.
    """
    return _bound.get()


@contextlib.contextmanager
def bounding_calls(seconds: float) -> Iterator[None]:
    """Declare, for the block (and tasks it creates), that calls run under a ``seconds`` limit."""
    token = _bound.set(seconds)
    try:
        yield
    finally:
        _bound.reset(token)


@runtime_checkable
class ToolSource(Protocol):
    """The shape every tool source has.

    ``name`` prefixes the ids of its tools (``<name>/<tool>``). ``list_tools`` may be called again
    after a change notification. A source may also set ``prefixed_names = True`` (not part of the
    protocol; read when the source joins a toolspace) to keep ``<name>__<tool>`` model-facing
    names for its tools whatever else is loaded (see :mod:`paraagent_runtime.naming`).
    ``call_tool`` receives the source's own tool name and validated arguments and returns any
    JSON-serializable value; it raises to signal failure.
    """

    name: str

    async def list_tools(self) -> list[ToolSpec]:
        """Return the tools this source currently serves."""
        ...

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Execute ``tool`` with ``arguments`` and return its JSON result."""
        ...

    async def aclose(self) -> None:
        """Release connections and child processes."""
        ...


class FunctionTool:
    """A Python callable (sync or async) exposed as a tool with an explicit JSON Schema."""

    def __init__(
        self,
        func: Callable[..., Any] | Callable[..., Awaitable[Any]],
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        annotations: ToolAnnotations | None = None,
        category: str = "",
    ) -> None:
        self.func = func
        self._is_async = inspect.iscoroutinefunction(func)
        self.name = name or func.__name__
        self.description = description if description is not None else inspect.getdoc(func) or ""
        self.input_schema = dict(input_schema or {"type": "object", "properties": {}})
        self.annotations = annotations or ToolAnnotations()
        self.category = category

    async def __call__(self, arguments: dict[str, Any]) -> Any:
        """Run the callable; sync callables run in a worker thread so they never block the loop.

        Under a dispatcher that thread comes from the dispatcher's own pool, sized by its
        ``max_concurrency`` (see :func:`~paraagent_runtime.concurrency.run_sync`).
        """
        if self._is_async:
            return await self.func(**arguments)
        return await run_sync(self.func, **arguments)


class FunctionToolSource:
    """An in-process tool source over :class:`FunctionTool` objects.

    For tests, benchmarks, embedding.
    """

    def __init__(self, name: str, tools: list[FunctionTool]) -> None:
        self.name = name
        self._tools = {tool.name: tool for tool in tools}

    async def list_tools(self) -> list[ToolSpec]:
        """Return the specs of the wrapped callables."""
        return [
            ToolSpec(
                id=tool_id(self.name, tool.name),
                description=tool.description,
                input_schema=tool.input_schema,
                annotations=tool.annotations,
                category=tool.category,
                provider=self.name,
            )
            for tool in self._tools.values()
        ]

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call the named function with the arguments as keywords."""
        try:
            function = self._tools[tool]
        except KeyError:
            raise KeyError(f"{self.name} has no tool {tool!r}") from None
        return await function(arguments)

    async def aclose(self) -> None:
        """Nothing to release."""

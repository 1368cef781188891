"""Registration of built-in tools: each provider module declares a tool and its handler together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from paraagent_runtime import ToolAnnotations

from ..records import ToolRecord
from ..world import World
from ._schema import Schema, obj

__all__ = ["BuiltinTool", "Handler", "Provider"]

Handler = Callable[[World, dict[str, Any]], dict[str, Any]]
"""A handler maps the world and validated arguments to a JSON object matching the output schema."""


@dataclass(frozen=True)
class BuiltinTool:
    """A built-in tool: its catalog record and the handler grounded in the world."""

    record: ToolRecord
    handler: Handler


class Provider:
    """Collects the tools of one provider (``weather``, ``aviation``…) as they are declared.

    Args:
        name: The short provider id; it becomes the tool source name.
        category: The catalog category shared by the provider's tools.
    """

    def __init__(self, name: str, category: str) -> None:
        self.name = name
        self.category = category
        self.tools: list[BuiltinTool] = []

    def tool(
        self,
        name: str,
        description: str,
        *,
        params: dict[str, Schema],
        required: Sequence[str] = (),
        output: Schema,
        read_only: bool = True,
        destructive: bool = False,
        title: str | None = None,
    ) -> Callable[[Handler], Handler]:
        """Declare a tool whose handler is the decorated function.

        Args:
            name: The tool's name inside the provider.
            description: What the tool does, written for a model choosing between tools.
            params: The input properties (JSON Schemas).
            required: The required input properties.
            output: The output JSON Schema (an object).
            read_only: Whether the tool only reads; lookups are read-only.
            destructive: Whether the tool changes or deletes something the user cares about.
            title: A human-readable title; derived from ``name`` when omitted.
        """

        def register(handler: Handler) -> Handler:
            record = ToolRecord(
                name=name,
                description=description,
                input_schema=obj(params, required, closed=True),
                output_schema=output,
                annotations=ToolAnnotations(
                    read_only=read_only,
                    destructive=destructive,
                    idempotent=read_only,
                    open_world=False,
                    title=title or name.replace("_", " ").capitalize(),
                ),
                provider=self.name,
                category=self.category,
                source="builtin",
                license="Apache-2.0",
            )
            self.tools.append(BuiltinTool(record, handler))
            return handler

        return register

"""The shapes every part shares: a tool's spec, one parsed call, and one call's result."""

from __future__ import annotations

import enum
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .naming import model_facing_name, split_tool_id

__all__ = [
    "ToolAnnotations",
    "ToolCall",
    "ToolErrorKind",
    "ToolResult",
    "ToolSpec",
]


class ToolAnnotations(BaseModel):
    """Behaviour hints (the MCP tool annotations): used for retries and approvals."""

    model_config = ConfigDict(frozen=True)

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = True
    title: str | None = None


class ToolSpec(BaseModel):
    """One tool interface: identity, documentation and input schema.

    ``id`` is ``<source>/<tool>``; :attr:`name` is the model-facing name: the one a toolspace
    assigned (:meth:`named`, see :mod:`paraagent_runtime.naming`), else ``<source>__<tool>``.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    description: str = ""
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    category: str = ""
    provider: str = ""
    _model_name: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str:
        """The name of the tool source serving this tool."""
        return split_tool_id(self.id)[0]

    @property
    def tool(self) -> str:
        """The tool's own name inside its source."""
        return split_tool_id(self.id)[1]

    @property
    def name(self) -> str:
        """The model-facing name: as assigned by a toolspace, else ``<source>__<tool>``."""
        return self._model_name or model_facing_name(self.id)

    def named(self, name: str) -> ToolSpec:
        """This spec under the model-facing ``name`` (itself when that is its name already)."""
        if name == self.name:
            return self
        spec = self.model_copy()
        spec._model_name = name
        return spec

    def card(self, *, max_description: int = 200) -> dict[str, Any]:
        """A compact card for search results: name, short description and parameter names."""
        properties = self.input_schema.get("properties") or {}
        required = set(self.input_schema.get("required") or [])
        params = [f"{key}{'' if key in required else '?'}" for key in properties]
        description = self.description
        if len(description) > max_description:
            description = description[: max_description - 1].rstrip() + "…"
        return {"name": self.name, "description": description, "parameters": params}

    def schema_view(self) -> dict[str, Any]:
        """The full model-facing schema returned by ``inspect_tool``."""
        view: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.input_schema,
        }
        if self.annotations.read_only or self.annotations.destructive:
            view["annotations"] = {
                "read_only": self.annotations.read_only,
                "destructive": self.annotations.destructive,
            }
        return view

    def openai_tool(self) -> dict[str, Any]:
        """The spec in OpenAI ``tools=[...]`` function format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }


class ToolCall(BaseModel):
    """One call as the model wrote it: the model-facing ``name``, its ``arguments`` and an id."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    def dedup_key(self) -> str:
        """A key equal for calls with the same name and arguments.

        For in-episode de-duplication.
        """
        return self.name + "\x00" + json.dumps(self.arguments, sort_keys=True, default=str)


class ToolErrorKind(str, enum.Enum):  # noqa: UP042 - StrEnum changes str()/format()
    """Why a call produced an error observation instead of a result."""

    FORMAT = "format_error"
    UNKNOWN_TOOL = "unknown_tool"
    UNLOADED_TOOL = "unloaded_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    TOOL_ERROR = "tool_error"
    TIMEOUT = "timeout"
    TOO_MANY_CALLS = "too_many_calls"
    CANCELLED = "cancelled"
    SOURCE_UNAVAILABLE = "source_unavailable"
    PHASE_CLOSED = "phase_closed"


class ToolResult(BaseModel):
    """The outcome of one call: JSON content or a typed error, with timing and truncation info."""

    call_id: str
    name: str
    content: Any = None
    error: str | None = None
    error_kind: ToolErrorKind | None = None
    latency_s: float = 0.0
    truncated: bool = False
    cached: bool = False

    @property
    def ok(self) -> bool:
        """True when the call produced content rather than an error."""
        return self.error_kind is None

    @classmethod
    def failure(
        cls, call: ToolCall, kind: ToolErrorKind, message: str, *, latency_s: float = 0.0
    ) -> ToolResult:
        """Build an error observation for ``call``."""
        return cls(
            call_id=call.id, name=call.name, error=message, error_kind=kind, latency_s=latency_s
        )

    def observation(self) -> Any:
        """The JSON value shown to the model: the content, or ``{"error": {...}}``."""
        if self.ok:
            return self.content
        return {"error": {"type": self.error_kind.value, "message": self.error}}

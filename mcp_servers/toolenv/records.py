"""The normalized tool record every ToolEnv catalog source produces."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from paraagent_runtime import ToolAnnotations, ToolSpec, tool_id

__all__ = ["ToolRecord"]


class ToolRecord(BaseModel):
    """One real (or built-in) tool interface, normalized.

    ``provider`` becomes the tool source name (``<provider>/<name>`` is the tool id), so it must be
    a short identifier such as ``weather`` or ``aws_s3``. ``response_template`` is an example or
    template response when the upstream documents one; ``output_schema`` when it is typed.
    ``schema_quality`` says how far the input schema can be trusted: ``spec`` (a published API
    description), ``live`` (a server's own ``tools/list``), ``crawled`` (scraped, untyped),
    ``synthetic`` (LLM-made, not a real interface) or empty (built-in).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    output_schema: dict[str, Any] | None = None
    response_template: Any = None
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    provider: str
    category: str = ""
    source: str = "builtin"
    license: str = ""
    schema_quality: str = ""

    @property
    def id(self) -> str:
        """The tool id ``<provider>/<name>``."""
        return tool_id(self.provider, self.name)

    def to_spec(self) -> ToolSpec:
        """The runtime's view of this record."""
        return ToolSpec(
            id=self.id,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
            category=self.category,
            provider=self.provider,
        )

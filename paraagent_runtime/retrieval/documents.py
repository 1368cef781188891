"""The text a tool is indexed by: provider, name, description, parameters (names, docs, enums)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..tools import ToolSpec

__all__ = ["catalog_key", "doc_hash", "provider_of", "tool_document"]

_MAX_ENUM_VALUES = 12
_MAX_DOC_CHARS = 2000


def provider_of(spec: ToolSpec) -> str:
    """The provider (server) a tool belongs to: ``spec.provider``, else its source name."""
    return spec.provider or spec.source


def _humanize(name: str) -> str:
    """Split ``get_flight-status`` / ``getFlightStatus`` style names into words for matching."""
    words: list[str] = []
    current = ""
    for char in name:
        if char in "_-./:" or char.isspace():
            words.append(current)
            current = ""
        elif char.isupper() and current and not current[-1].isupper():
            words.append(current)
            current = char
        else:
            current += char
    words.append(current)
    return " ".join(word for word in words if word)


def _parameter_lines(schema: Mapping[str, Any]) -> Iterable[str]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for name, prop in properties.items():
        parts = [_humanize(str(name))]
        if isinstance(prop, Mapping):
            description = prop.get("description")
            if isinstance(description, str) and description.strip():
                parts.append(description.strip())
            enum = prop.get("enum")
            if isinstance(enum, list) and enum:
                values = ", ".join(str(value) for value in enum[:_MAX_ENUM_VALUES])
                parts.append(f"one of: {values}")
        yield ": ".join(parts)


def tool_document(spec: ToolSpec) -> str:
    """Build the searchable text of one tool.

    The document reads ``provider | tool name (split into words) | description | parameters``,
    where each parameter contributes its name, description and enum values. Empty parts are
    left out, and the result is cut at 2,000 characters (the encoder truncates anyway).

    Args:
        spec: The tool to describe.

    Returns:
        One line of plain text; never empty (the tool name is always present).
    """
    provider = provider_of(spec)
    parts = [_humanize(provider)] if provider else []
    parts.append(_humanize(spec.tool))
    if spec.description.strip():
        parts.append(" ".join(spec.description.split()))
    parameters = "; ".join(_parameter_lines(spec.input_schema))
    if parameters:
        parts.append(f"parameters: {parameters}")
    return " | ".join(parts)[:_MAX_DOC_CHARS]


def doc_hash(document: str) -> str:
    """A short stable hash of one document (embedding cache key within a model)."""
    return hashlib.sha256(document.encode("utf-8")).hexdigest()[:32]


def catalog_key(ids: Iterable[str], documents: Iterable[str], model_name: str) -> str:
    """Hash a catalog (tool ids and documents, order-insensitive) together with the model name.

    Args:
        ids: Tool ids.
        documents: Their documents, aligned with ``ids``.
        model_name: The embedding model's name or path.

    Returns:
        A hex digest that changes whenever any id, document or the model changes.
    """
    pairs = sorted(zip(ids, documents, strict=True))
    digest = hashlib.sha256(model_name.encode("utf-8"))
    digest.update(json.dumps(pairs, ensure_ascii=False).encode("utf-8"))
    return digest.hexdigest()

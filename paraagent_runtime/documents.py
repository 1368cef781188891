"""The text a tool is searched by, and the identifier splitter behind it.

One builder serves every index: the keyword search of the runtime core (no dependencies), and
the BM25 and embedding halves of the ``retrieval`` extra. A document reads
``provider | tool name (split into words) | description | parameters``, where each parameter
contributes its name, description and enum values. A *terse* tool (no description, or one that
only repeats its name) gets its category as well, so the parameters, provider and category carry
the meaning its description does not. Text in any language is kept as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .tools import ToolSpec

__all__ = ["is_terse", "provider_of", "split_identifier", "tool_document"]

_SEPARATORS = frozenset("_-./:")
_MAX_ENUM_VALUES = 12
_MAX_DOC_CHARS = 2000
_TERSE_EXTRA_WORDS = 3
"""A description adding fewer words than this to the tool's name and provider is terse."""


def split_identifier(name: str) -> list[str]:
    """Split a ``snake_case``, ``kebab-case``, dotted or ``camelCase`` identifier into words.

    Words break at ``_ - . / :`` and whitespace, and before an upper-case letter that follows a
    character that is not upper case (so acronyms stay whole: ``HTTPServer`` is one word).

    Example:
        >>> split_identifier("getFlightStatus")
        ['get', 'Flight', 'Status']
        >>> split_identifier("aviation/get_flight-status")
        ['aviation', 'get', 'flight', 'status']
    """
    words: list[str] = []
    current = ""
    for char in name:
        if char in _SEPARATORS or char.isspace():
            words.append(current)
            current = ""
        elif char.isupper() and current and not current[-1].isupper():
            words.append(current)
            current = char
        else:
            current += char
    words.append(current)
    return [word for word in words if word]


def provider_of(spec: ToolSpec) -> str:
    """The provider (server) a tool belongs to: ``spec.provider``, else its source name."""
    return spec.provider or spec.source


def _parameter_lines(schema: Mapping[str, Any]) -> Iterable[str]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for name, prop in properties.items():
        parts = [" ".join(split_identifier(str(name)))]
        if isinstance(prop, Mapping):
            description = prop.get("description")
            if isinstance(description, str) and description.strip():
                parts.append(description.strip())
            enum = prop.get("enum")
            if isinstance(enum, list) and enum:
                values = ", ".join(str(value) for value in enum[:_MAX_ENUM_VALUES])
                parts.append(f"one of: {values}")
        yield ": ".join(parts)


def _word_set(text: str) -> set[str]:
    return {
        word.lower() for word in split_identifier("".join(c if c.isalnum() else " " for c in text))
    }


def is_terse(spec: ToolSpec) -> bool:
    """Whether ``spec``'s description says little beyond its name and provider.

    True when it is missing or adds fewer than three words to the words of the tool name and
    provider (``"Weather: Forecast"`` for ``weather/forecast``).
    """
    named = _word_set(spec.tool) | _word_set(provider_of(spec))
    return len(_word_set(spec.description) - named) < _TERSE_EXTRA_WORDS


def tool_document(spec: ToolSpec) -> str:
    """Build the searchable text of one tool.

    The document reads ``provider | tool name (split into words) | description | parameters``,
    where each parameter contributes its name, description and enum values; a terse tool
    (:func:`is_terse`) gets ``| category: ...`` after its description. Empty parts are left out,
    and the result is cut at 2,000 characters (the encoder truncates anyway).

    Args:
        spec: The tool to describe.

    Returns:
        One line of plain text; never empty (the tool name is always present).
    """
    provider = provider_of(spec)
    parts = [" ".join(split_identifier(provider))] if provider else []
    parts.append(" ".join(split_identifier(spec.tool)))
    if spec.description.strip():
        parts.append(" ".join(spec.description.split()))
    if spec.category.strip() and is_terse(spec):
        parts.append(f"category: {' '.join(split_identifier(spec.category))}")
    parameters = "; ".join(_parameter_lines(spec.input_schema))
    if parameters:
        parts.append(f"parameters: {parameters}")
    return " | ".join(parts)[:_MAX_DOC_CHARS]

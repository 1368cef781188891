"""Mapping between tool ids (``<source>/<tool>``) and model-facing names.

A model-facing name is ``<source>__<tool>`` sanitized to ``[A-Za-z0-9_-]{1,64}``; when the
sanitized form is too long it is cut and suffixed with a short hash of the full id, so distinct
ids never collide and the mapping is reversible through the toolspace's table.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_NAME_LENGTH", "model_facing_name", "split_tool_id", "tool_id"]

MAX_NAME_LENGTH = 64
_INVALID = re.compile(r"[^A-Za-z0-9_-]+")
_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def tool_id(source: str, tool: str) -> str:
    """Return the canonical id of ``tool`` served by ``source``."""
    return f"{source}/{tool}"


def split_tool_id(identifier: str) -> tuple[str, str]:
    """Split a tool id into ``(source, tool)``; the tool part may itself contain ``/``."""
    source, sep, tool = identifier.partition("/")
    if not sep:
        return "", identifier
    return source, tool


def model_facing_name(identifier: str) -> str:
    """Return the sanitized model-facing name of a tool id (deterministic, at most 64 chars).

    Names that are already valid stay as they are; any lossy change (replaced characters or a
    cut) adds an 8-hex hash of the full id so that two ids never map to one name.
    """
    source, tool = split_tool_id(identifier)
    raw = f"{source}__{tool}" if source else tool
    if len(raw) <= MAX_NAME_LENGTH and _VALID.fullmatch(raw):
        return raw
    digest = hashlib.sha1(identifier.encode("utf-8")).hexdigest()[:8]
    stem = _INVALID.sub("_", raw).strip("_") or "tool"
    return f"{stem[: MAX_NAME_LENGTH - 9]}_{digest}"

"""Behaviour annotations inferred from an operation's HTTP method and name."""

from __future__ import annotations

import re

from paraagent_runtime import ToolAnnotations

__all__ = ["infer_annotations"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_READ_VERBS = frozenset(
    "get list describe search query read fetch find lookup head view show count retrieve scan "
    "select download check preview estimate validate".split()
)
_DESTRUCTIVE_VERBS = frozenset(
    "delete remove terminate destroy purge drop erase deregister revoke wipe truncate".split()
)
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_CACHE: dict[tuple[bool, bool, bool], ToolAnnotations] = {}


def _verb(name: str) -> str:
    words = [word.lower() for word in _WORD.findall(name)]
    if len(words) > 1 and words[0] in {"batch", "bulk"}:
        return words[1]
    return words[0] if words else ""


def infer_annotations(name: str, http_method: str | None = None) -> ToolAnnotations:
    """Infer read-only / destructive / idempotent hints.

    GET/HEAD mean read-only and DELETE destructive whatever the name; otherwise the leading verb
    of ``name`` decides (``GetObject``, ``list_files``, ``files.delete`` ...), except that PUT and
    PATCH never count as read-only. Pass the method only when it carries meaning (not for
    RPC-style APIs that POST everything). Equal results share one frozen instance.
    """
    method = (http_method or "").upper()
    verb = _verb(name.rsplit(".", 1)[-1]) if "." in name else _verb(name)
    if method in _READ_METHODS:
        read_only, destructive = True, False
    elif method == "DELETE":
        read_only, destructive = False, True
    else:
        read_only = method not in {"PUT", "PATCH"} and verb in _READ_VERBS
        destructive = verb in _DESTRUCTIVE_VERBS
    idempotent = read_only or destructive or method == "PUT"
    key = (read_only, destructive, idempotent)
    if key not in _CACHE:
        _CACHE[key] = ToolAnnotations(
            read_only=read_only, destructive=destructive, idempotent=idempotent
        )
    return _CACHE[key]

"""Model-facing tool names: the tool's own name unless two sources share it, and the aliases.

Tool ids are ``<source>/<tool>``; a model-facing name matches ``[A-Za-z0-9_-]{1,64}``. The
toolspace names its tools with :func:`assign_names`, as close to the tool's own name as the other
tools allow:

1. the tool's own name, sanitized (runs of other characters become ``_``, cut to 64):
   ``get_time``, ``math.factorial`` → ``math_factorial``, ``get-tiny-image`` stays;
2. where two tools share that name (two servers both serve ``search``), each of them becomes
   ``<source>__<tool>`` sanitized: ``github__search``, ``jira__search``; a tool whose own name is
   already valid keeps it against tools that only sanitize to it (``a_b`` beside ``a.b``);
3. only where that still collides, a short hash of the id is appended (``a_b_3c81eb18``).

Names reserved for the runtime (the meta-tools ``search_tools``, ``inspect_tool``) count as
taken. A source whose tools must keep ``<source>__<tool>`` names whatever else is loaded sets
``prefixed_names = True``: ToolEnv does, because its providers share tool names and its tasks,
gold call DAGs, oracle, demonstrations and trained models all use :func:`model_facing_name`
(``weather__get_forecast``). Those names are fixed and taken first.

Because a name depends on the other tools, adding a source may rename a tool that was unique.
The resolver therefore also accepts :func:`name_aliases` of every tool — its own name, its id,
``<source>__<tool>`` (the form every tool had before), and the sanitized and underscore spellings
(``get_tiny_image``) — whenever exactly one tool claims that spelling; a ``prefixed_names``
source's tools have only their own name and their id as aliases.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

__all__ = [
    "MAX_NAME_LENGTH",
    "assign_names",
    "model_facing_name",
    "name_aliases",
    "sanitize_name",
    "split_tool_id",
    "tool_id",
    "unique_aliases",
]

MAX_NAME_LENGTH = 64
_INVALID = re.compile(r"[^A-Za-z0-9_-]+")
_NOT_WORD = re.compile(r"[^A-Za-z0-9_]+")
_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_HASH_CHARS = 8


def tool_id(source: str, tool: str) -> str:
    """Return the canonical id of ``tool`` served by ``source``."""
    return f"{source}/{tool}"


def split_tool_id(identifier: str) -> tuple[str, str]:
    """Split a tool id into ``(source, tool)``; the tool part may itself contain ``/``."""
    source, sep, tool = identifier.partition("/")
    if not sep:
        return "", identifier
    return source, tool


def _digest(identifier: str) -> str:
    return hashlib.sha1(identifier.encode("utf-8")).hexdigest()[:_HASH_CHARS]


def _qualified(identifier: str) -> str:
    source, tool = split_tool_id(identifier)
    return f"{source}__{tool}" if source else tool


def sanitize_name(name: str) -> str:
    """``name`` as a valid model-facing name: other characters become ``_``, cut to 64."""
    return (_INVALID.sub("_", name).strip("_") or "tool")[:MAX_NAME_LENGTH]


def _hashed(identifier: str) -> str:
    stem = _INVALID.sub("_", _qualified(identifier)).strip("_") or "tool"
    return f"{stem[: MAX_NAME_LENGTH - _HASH_CHARS - 1]}_{_digest(identifier)}"


def model_facing_name(identifier: str) -> str:
    """The ``<source>__<tool>`` name of a tool id (deterministic, at most 64 chars).

    The fixed name of tools whose source sets ``prefixed_names`` (ToolEnv). Names that are
    already valid stay as they are; any lossy change (replaced characters or a cut) adds an
    8-hex hash of the full id so that two ids never map to one name.
    """
    raw = _qualified(identifier)
    if len(raw) <= MAX_NAME_LENGTH and _VALID.fullmatch(raw):
        return raw
    return _hashed(identifier)


def _levels(identifier: str) -> list[tuple[str, bool]]:
    """The names a tool may get, preferred first, each with whether it is the exact spelling."""
    source, tool = split_tool_id(identifier)
    levels = [(sanitize_name(tool), bool(_VALID.fullmatch(tool)))]
    if source:
        qualified = f"{source}__{tool}"
        levels.append((sanitize_name(qualified), bool(_VALID.fullmatch(qualified))))
    return levels


def assign_names(
    identifiers: Iterable[str],
    *,
    prefixed_sources: Collection[str] = (),
    reserved: Collection[str] = (),
) -> dict[str, str]:
    """Model-facing names for the tool ``identifiers`` (see the module docstring for the rule).

    Args:
        identifiers: distinct tool ids, in toolspace order.
        prefixed_sources: sources whose tools always get :func:`model_facing_name`.
        reserved: names no tool may get (the runtime's meta-tools).

    Returns:
        The name of every id; distinct ids get distinct names.
    """
    names: dict[str, str] = {}
    taken = set(reserved)
    pending: list[str] = []
    for identifier in identifiers:
        if split_tool_id(identifier)[0] in prefixed_sources:
            names[identifier] = model_facing_name(identifier)
            taken.add(names[identifier])
        else:
            pending.append(identifier)
    level = 0
    while pending:
        claims: defaultdict[str, list[tuple[str, bool]]] = defaultdict(list)
        unplaced: list[str] = []
        for identifier in pending:
            levels = _levels(identifier)
            if level < len(levels):
                name, exact = levels[level]
                claims[name].append((identifier, exact))
            else:
                unplaced.append(identifier)
        next_pending: list[str] = []
        for name, claimants in claims.items():
            exact = [identifier for identifier, is_exact in claimants if is_exact]
            winner = (
                claimants[0][0] if len(claimants) == 1 else exact[0] if len(exact) == 1 else None
            )
            if name in taken:
                winner = None
            for identifier, _ in claimants:
                if identifier == winner:
                    names[identifier] = name
                    taken.add(name)
                else:
                    next_pending.append(identifier)
        for identifier in unplaced:
            names[identifier] = _hashed(identifier)
        pending = next_pending
        level += 1
    return names


def name_aliases(identifier: str, *, prefixed: bool = False) -> set[str]:
    """Spellings a model may use for the tool ``identifier`` besides its assigned name.

    Args:
        identifier: the tool id.
        prefixed: its source keeps :func:`model_facing_name` names; then only the tool's own
            name and its id are aliases (ToolEnv's catalogs run to tens of thousands of tools).
    """
    tool = split_tool_id(identifier)[1]
    spellings = {tool, identifier}
    if not prefixed:
        spellings.add(model_facing_name(identifier))
        for raw in (tool, _qualified(identifier)):
            spellings.update((raw, sanitize_name(raw), _NOT_WORD.sub("_", raw).strip("_")))
    spellings.discard("")
    return spellings


def unique_aliases(
    names: Mapping[str, str], aliases: Mapping[str, Iterable[str]]
) -> dict[str, str]:
    """The aliases that name exactly one tool and are no tool's name, mapped to that name.

    Args:
        names: the assigned name of every tool id.
        aliases: the alias spellings of every tool id.
    """
    ambiguous = ""  # no tool is named "" (names are 1-64 characters)
    owners: dict[str, str] = {}
    for identifier, spellings in aliases.items():
        name = names[identifier]
        for spelling in spellings:
            if owners.setdefault(spelling, name) != name:
                owners[spelling] = ambiguous
    primary = set(names.values())
    return {
        spelling: name
        for spelling, name in owners.items()
        if name != ambiguous and spelling not in primary
    }

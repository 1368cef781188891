"""Named tool catalogs for the CLI: the built-in ToolEnv tools, the full ToolEnv catalog, a file.

The CLI is the composition root, so this is where ``mcp_servers.toolenv`` is imported (lazily);
``paraagent_runtime.retrieval`` only ever sees plain :class:`~paraagent_runtime.tools.ToolSpec`
lists.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, UserError
from ..tools import ToolAnnotations, ToolSpec

__all__ = [
    "BUILTIN",
    "FULL",
    "TOOLENV",
    "ToolCatalog",
    "catalog_label",
    "read_tool_specs",
    "resolve_catalog",
]

BUILTIN = "builtin"
FULL = "full"
TOOLENV = "toolenv"
_LABEL = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class ToolCatalog:
    """A resolved catalog.

    Attributes:
        label: A file-name-safe name, used as the catalog's index sub-directory.
        tools: The catalog's tools.
    """

    label: str
    tools: list[ToolSpec]


_SPEC_FIELDS = tuple(ToolSpec.model_fields)
_SPEC_ANNOTATIONS = tuple(ToolAnnotations.model_fields)
_MCP_FIELDS = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "execution",
    "_meta",
)
_MCP_ANNOTATIONS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def _check_fields(record: dict[str, Any], known: tuple[str, ...], what: str, where: str) -> None:
    for field in record:
        if field not in known:
            close = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
            raise ConfigError(f"{where}: unknown field {field!r} in {what}{hint}")


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"]) or "record"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{field}: {first['msg']}{more}"


def _spec_of(record: Any, source: str, where: str) -> ToolSpec:
    """One catalog record as a spec: a ToolSpec, or an MCP ``tools/list`` tool of ``source``."""
    if not isinstance(record, dict):
        raise ConfigError(f"{where}: expected a JSON object, got {type(record).__name__}")
    try:
        if "id" in record:
            _check_fields(record, _SPEC_FIELDS, "a ToolSpec record", where)
            if isinstance(record.get("annotations"), dict):
                _check_fields(
                    record["annotations"], _SPEC_ANNOTATIONS, "ToolSpec annotations", where
                )
            return ToolSpec.model_validate(record)
        if "name" in record:
            _check_fields(record, _MCP_FIELDS, "an MCP tool", where)
            if isinstance(record.get("annotations"), dict):
                _check_fields(record["annotations"], _MCP_ANNOTATIONS, "MCP annotations", where)
            import mcp_types

            from ..mcp.source import spec_from_mcp

            return spec_from_mcp(source, mcp_types.Tool.model_validate(record))
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_first_error(exc)}") from exc
    raise ConfigError(
        f"{where}: neither a ToolSpec record (with 'id') nor an MCP tool (with 'name')"
    )


def read_tool_specs(path: Path) -> list[ToolSpec]:
    """Read a catalog file of tools (the format is in the README, "Catalog files").

    A ``.jsonl`` file holds one tool a line (lines end at a newline only: a U+2028 inside a
    description is text); a ``.json`` file holds an array of tools. Each tool is a
    :class:`ToolSpec` record (``id``, ``description``, ``input_schema``, …) or an MCP
    ``tools/list`` tool (``name``, ``description``, ``inputSchema``, …), whose source is the
    file's name (``github.jsonl``: ``github/create_issue``). Blank lines are skipped.

    Raises:
        ConfigError: The file is unreadable, a record is not a tool (the line or item and the
            field are named), or there is no tool.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read tool file {path}: {exc}") from exc
    records: list[tuple[str, Any]] = []
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{path}: not JSON ({exc})") from exc
        if not isinstance(data, list):
            raise ConfigError(f"{path}: expected a JSON array of tools")
        records = [(f"{path}: item {index}", item) for index, item in enumerate(data)]
    else:
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                try:
                    records.append((f"{path}:{number}", json.loads(line)))
                except ValueError as exc:
                    raise ConfigError(f"{path}:{number}: not JSON ({exc})") from exc
    tools = [_spec_of(record, path.stem, where) for where, record in records]
    if not tools:
        raise ConfigError(f"{path}: no tools in the file")
    return tools


def catalog_label(name: str) -> str:
    """The label (index sub-directory) of a catalog name, without loading the catalog.

    Raises:
        UserError: Not ``builtin``, ``full``, ``toolenv`` or an existing ``.jsonl``/``.json``.
    """
    if name == BUILTIN:
        return BUILTIN
    if name in (FULL, TOOLENV):
        return FULL
    path = Path(name).expanduser()
    if path.suffix not in (".jsonl", ".json") or not path.is_file():
        raise UserError(
            f"unknown catalog {name!r}: use builtin, full (alias toolenv) "
            "or an existing tools file, PATH.jsonl or PATH.json"
        )
    digest = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:10]
    return f"file-{_LABEL.sub('_', path.stem)[:40]}-{digest}"


def resolve_catalog(name: str, *, build_missing: bool = False) -> ToolCatalog:
    """Resolve ``builtin``, ``full`` (alias ``toolenv``) or a tools file (:func:`read_tool_specs`).

    Args:
        name: The catalog name or file path.
        build_missing: For ``full``: build the ToolEnv catalog when no cached build exists
            (minutes); otherwise a missing cache is an error.

    Raises:
        UserError: An unknown name or a missing file.
        ConfigError: An unusable file or (``full``) no cached ToolEnv catalog.
    """
    label = catalog_label(name)
    if label == BUILTIN:
        from mcp_servers.toolenv.builtin import builtin_records

        return ToolCatalog(label, [record.to_spec() for record in builtin_records()])
    if label == FULL:
        from mcp_servers.toolenv.catalog import load_catalog

        catalog = load_catalog(build=build_missing, progress=build_missing)
        return ToolCatalog(label, [record.to_spec() for record in catalog.records])
    return ToolCatalog(label, read_tool_specs(Path(name).expanduser()))

"""Named tool catalogs for the CLI: the built-in ToolEnv tools, the full ToolEnv catalog, a file.

The CLI is the composition root, so this is where ``mcp_servers.toolenv`` is imported (lazily);
``paraagent_runtime.retrieval`` only ever sees plain :class:`~paraagent_runtime.tools.ToolSpec`
lists.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, UserError
from ..tools import ToolSpec

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


def read_tool_specs(path: Path) -> list[ToolSpec]:
    """Read a JSONL file of :class:`ToolSpec` records (blank lines skipped).

    Raises:
        ConfigError: The file is unreadable, a line is not a ToolSpec, or there is no tool.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read tool file {path}: {exc}") from exc
    tools = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                tools.append(ToolSpec.model_validate_json(line))
            except ValueError as exc:
                first = str(exc).splitlines()[0]
                raise ConfigError(f"{path}:{number}: not a ToolSpec record ({first})") from exc
    if not tools:
        raise ConfigError(f"{path}: no tools in the file")
    return tools


def catalog_label(name: str) -> str:
    """The label (index sub-directory) of a catalog name, without loading the catalog.

    Raises:
        UserError: Not ``builtin``, ``full``, ``toolenv`` or an existing ``PATH.jsonl``.
    """
    if name == BUILTIN:
        return BUILTIN
    if name in (FULL, TOOLENV):
        return FULL
    path = Path(name).expanduser()
    if path.suffix != ".jsonl" or not path.is_file():
        raise UserError(
            f"unknown catalog {name!r}: use builtin, full (alias toolenv) "
            "or an existing PATH.jsonl of ToolSpec records"
        )
    digest = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:10]
    return f"file-{_LABEL.sub('_', path.stem)[:40]}-{digest}"


def resolve_catalog(name: str, *, build_missing: bool = False) -> ToolCatalog:
    """Resolve ``builtin``, ``full`` (alias ``toolenv``) or a ``PATH.jsonl`` of ToolSpec records.

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

"""Seal-Tools' tools and queries as tool specs plus retrieval queries with gold ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..tools import ToolSpec
from .stabletoolbench import RetrievalBench, RetrievalQuery

__all__ = ["SEAL_QUERY_FILES", "load_seal_tools"]

SEAL_QUERY_FILES = ("dev", "test_in_domain", "test_out_domain")
"""The upstream query files, in load order (their stems name a query's ``split``)."""
_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "str": "string"}


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def _spec(tool: dict[str, Any]) -> ToolSpec:
    properties: dict[str, Any] = {}
    for name, parameter in (tool.get("parameters") or {}).items():
        if not isinstance(parameter, dict):
            continue
        prop: dict[str, Any] = {"type": _TYPES.get(str(parameter.get("type")), "string")}
        if str(parameter.get("description", "")).strip():
            prop["description"] = str(parameter["description"]).strip()
        properties[str(name)] = prop
    field = str(tool.get("field", ""))
    return ToolSpec(
        id=f"seal/{tool['api_name']}",
        description=str(tool.get("api_description") or "").strip(),
        input_schema={
            "type": "object",
            "properties": properties,
            "required": [str(name) for name in tool.get("required") or [] if name in properties],
        },
        category=field,
        provider=field.partition("/")[0],
    )


def load_seal_tools(root: str | Path) -> RetrievalBench:
    """Load Seal-Tools' ``tool.jsonl`` pool and its three query files under ``root``.

    Every tool becomes a :class:`ToolSpec` with id ``seal/<api_name>``, ``provider`` = the
    top-level domain of its ``field`` and ``category`` = the whole field. A query's gold ids are
    the distinct APIs of its ``calling`` list; its ``split`` is the file stem (``dev``,
    ``test_in_domain``, ``test_out_domain``) and its id ``seal_<split>:<upstream id>``.

    Args:
        root: The ``seal-tools`` data folder.

    Raises:
        ConfigError: A file is missing or does not parse, or a gold API is not in the pool.
    """
    folder = Path(root) / "Seal-Tools_Dataset"
    tools = [_spec(tool) for tool in _lines(folder / "tool.jsonl")]
    known = {tool.id for tool in tools}
    queries: list[RetrievalQuery] = []
    for split in SEAL_QUERY_FILES:
        for record in _lines(folder / f"{split}.jsonl"):
            gold = tuple(dict.fromkeys(f"seal/{call['api']}" for call in record["calling"]))
            missing = [tool for tool in gold if tool not in known]
            if missing:
                raise ConfigError(f"Seal-Tools query {record['id']!r} needs unknown {missing}")
            queries.append(
                RetrievalQuery(
                    query_id=f"seal_{split}:{record['id']}",
                    text=str(record["query"]),
                    group="seal",
                    split=split,
                    gold=gold,
                    tools_needed=len(gold),
                )
            )
    return RetrievalBench(tools=tools, queries=queries, name="seal-tools")

"""StableToolBench's solvable queries as tool specs plus retrieval queries with gold ids."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..tools import ToolSpec

__all__ = ["RetrievalBench", "RetrievalQuery", "load_stabletoolbench"]

_TYPES = {"NUMBER": "number", "BOOLEAN": "boolean", "ARRAY": "array", "OBJECT": "object"}
_SLUG = re.compile(r"[^A-Za-z0-9]+")


@dataclass(frozen=True)
class RetrievalQuery:
    """One query with the ids of its gold (relevant) tools.

    Attributes:
        query_id: Unique over every query set (``<file stem>:<upstream id>``).
        text: The user request.
        group: The upstream group (``G1``, ``G2``, ``seal``).
        split: The upstream split (``instruction``, ``tool``, ``in_domain``, ...).
        gold: Ids of the tools (endpoints) the query needs.
        tools_needed: How many distinct tools (a RapidAPI tool, a Seal-Tools API) it needs;
            a query needing two or more is a *multi-tool* query.
    """

    query_id: str
    text: str
    group: str
    split: str
    gold: tuple[str, ...]
    tools_needed: int = 1

    @property
    def multi_tool(self) -> bool:
        """Whether the query needs two or more distinct tools."""
        return self.tools_needed >= 2


@dataclass(frozen=True)
class RetrievalBench:
    """A tool pool and the queries to retrieve from it (``name``: the data set)."""

    tools: list[ToolSpec]
    queries: list[RetrievalQuery]
    name: str = "stabletoolbench"


def _slug(text: str) -> str:
    return _SLUG.sub("_", text).strip("_").lower() or "x"


def _schema(api: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for parameter in [*api.get("required_parameters", []), *api.get("optional_parameters", [])]:
        name = str(parameter.get("name", "")).strip()
        if not name:
            continue
        prop: dict[str, Any] = {
            "type": _TYPES.get(str(parameter.get("type", "")).upper(), "string")
        }
        if str(parameter.get("description", "")).strip():
            prop["description"] = str(parameter["description"]).strip()
        properties[name] = prop
    required = [str(p.get("name")) for p in api.get("required_parameters", []) if p.get("name")]
    return {"type": "object", "properties": properties, "required": required}


def load_stabletoolbench(root: str | Path) -> RetrievalBench:
    """Load every ``solvable_queries/test_instruction/*.json`` group under ``root``.

    The pool is the union of all ``api_list`` entries, one :class:`ToolSpec` per unique
    ``(tool_name, api_name)`` with id ``<tool slug>/<api slug>``, ``provider`` = the RapidAPI tool
    and ``category`` = its category. Gold ids come from ``relevant APIs``; the group is the file
    name's prefix (``G1``, ``G2``, ...), the split its suffix (``instruction``, ``tool``, ...);
    ``tools_needed`` counts the distinct RapidAPI tools among the gold endpoints.

    Args:
        root: The ``stabletoolbench`` data folder.

    Raises:
        ConfigError: No query file is found or a file does not parse.
    """
    folder = Path(root) / "solvable_queries" / "test_instruction"
    files = sorted(folder.glob("*.json"))
    if not files:
        raise ConfigError(f"no StableToolBench query files under {folder}")
    ids: dict[tuple[str, str], str] = {}
    tools: list[ToolSpec] = []
    queries: list[RetrievalQuery] = []
    for path in files:
        group, _, split = path.stem.partition("_")
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from exc
        for record in records:
            for api in record.get("api_list", []):
                key = (api["tool_name"], api["api_name"])
                if key in ids:
                    continue
                identifier = f"{_slug(key[0])}/{_slug(key[1])}"
                while identifier in ids.values():
                    identifier += "_"
                ids[key] = identifier
                description = str(api.get("api_description") or "").strip()
                tools.append(
                    ToolSpec(
                        id=identifier,
                        description=description or f"{key[0]}: {key[1]}",
                        input_schema=_schema(api),
                        category=str(api.get("category_name", "")),
                        provider=key[0],
                    )
                )
            gold = tuple(dict.fromkeys(ids[(t, a)] for t, a in record["relevant APIs"]))
            queries.append(
                RetrievalQuery(
                    query_id=f"{path.stem}:{record['query_id']}",
                    text=str(record["query"]),
                    group=group,
                    split=split,
                    gold=gold,
                    tools_needed=len({tool for tool, _ in record["relevant APIs"]}),
                )
            )
    return RetrievalBench(tools=tools, queries=queries)

"""The tool-search protocol behind ``search_tools``.

Keyword default; FAISS/BM25 in ``retrieval``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from .tools import ToolSpec

__all__ = ["NeedAwareSearch", "SearchHit", "ToolSearch", "default_tool_search", "index_scope"]


@dataclass(frozen=True)
class SearchHit:
    """One search result.

    Attributes:
        tool: The tool id.
        score: Its score (higher is better; comparable only within one result list).
        answers: The part of the query this tool was found for, when the search split a
            multi-part request into its needs; ``None`` when it answers the query as a whole.
    """

    tool: str
    score: float
    answers: str | None = None


@runtime_checkable
class ToolSearch(Protocol):
    """A searchable index over tool specs.

    ``update`` replaces the indexed set (implementations may diff it against what they hold and
    re-embed only what changed); ``search`` returns the best ``top_k`` tool ids, best first.
    """

    async def update(self, tools: Sequence[ToolSpec]) -> None:
        """Index exactly ``tools`` (adding new ones, dropping ones no longer present)."""
        ...

    async def search(self, query: str, *, top_k: int = 5) -> list[tuple[str, float]]:
        """Return ``(tool_id, score)`` pairs for ``query``, best first."""
        ...


@runtime_checkable
class NeedAwareSearch(Protocol):
    """A :class:`ToolSearch` that can say which part of a request each result answers."""

    async def search_hits(self, query: str, *, top_k: int = 5) -> list[SearchHit]:
        """Return the ``top_k`` best hits for ``query``, best first."""
        ...


def default_tool_search(scope: str = "builtin") -> ToolSearch:
    """The search the CLI puts behind ``search_tools``: hybrid FAISS + BM25 when installed.

    Falls back to the keyword search when the ``retrieval`` extra is missing. Embeddings are
    persisted in ``<default index dir>/<scope>``: the on-disk store keeps one catalog per
    directory, so each tool space (see :func:`index_scope`) gets its own and a catalog is embedded
    once per machine; ``paraagent index build --catalog builtin`` fills the ``builtin`` scope.
    """
    from .errors import UserError

    try:
        from .retrieval import HybridToolSearch, RetrievalConfig, default_index_dir

        return HybridToolSearch(RetrievalConfig(index_dir=default_index_dir() / scope))
    except UserError:
        from .keyword_search import KeywordToolSearch

        return KeywordToolSearch()


def index_scope(mcp_config: Path | None, *, with_builtin: bool = True) -> str:
    """The index sub-directory of a tool space: the built-in ToolEnv and/or one MCP config file.

    Args:
        mcp_config: The MCP servers file of the tool space, if any (keyed by its resolved path).
        with_builtin: Whether the built-in ToolEnv catalog is part of the tool space.
    """
    if mcp_config is None:
        return "builtin"
    digest = hashlib.sha256(str(mcp_config.expanduser().resolve()).encode()).hexdigest()[:12]
    return f"{'builtin+' if with_builtin else ''}mcp-{digest}"

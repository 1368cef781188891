"""The tool-search protocol behind ``search_tools`` (keyword default; FAISS/BM25 in ``retrieval``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .tools import ToolSpec

__all__ = ["ToolSearch", "default_tool_search"]


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


def default_tool_search() -> ToolSearch:
    """The search the CLI puts behind ``search_tools``: hybrid FAISS + BM25 when installed.

    Falls back to the keyword search when the ``retrieval`` extra is missing. Embeddings are
    persisted in the default index directory, so a catalog is embedded once per machine.
    """
    from .errors import UserError

    try:
        from .retrieval import HybridToolSearch, RetrievalConfig, default_index_dir

        return HybridToolSearch(RetrievalConfig(index_dir=default_index_dir()))
    except UserError:
        from .keyword_search import KeywordToolSearch

        return KeywordToolSearch()

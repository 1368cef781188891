"""``paraagent index build|search``: build, persist and query the hybrid tool index of a catalog.

Each catalog keeps its embeddings in its own sub-directory of the index directory
(``<index-dir>/<catalog label>``), because the on-disk store holds one catalog per model and
directory. Only embeddings are persisted; the FAISS and BM25 structures are rebuilt on load. A
one-shot search uses exact (flat) FAISS: building an HNSW graph over 50k tools costs far more
than the few exact searches it would speed up.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..errors import UserError
from ..retrieval.config import RetrievalConfig, SearchMode

if TYPE_CHECKING:
    from ..retrieval import HybridToolSearch
    from .tool_catalogs import ToolCatalog

__all__ = [
    "BuildSummary",
    "build_index",
    "check_query",
    "index_app",
    "require_built",
    "search_index",
]

index_app = typer.Typer(
    name="index",
    help="Build and query the hybrid (FAISS + BM25) tool index.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
console = Console()
_DESCRIPTION_CHARS = 60
_CHECKPOINT = 5000

CatalogOption = Annotated[
    str,
    typer.Option(
        "--catalog", help="builtin, full (the ToolEnv catalog) or a tools file (.jsonl or .json)."
    ),
]
ModelOption = Annotated[
    Path | None,
    typer.Option("--encoder", help="Local sentence-transformers model directory (default MiniLM)."),
]
IndexDirOption = Annotated[
    Path | None,
    typer.Option(
        "--index-dir", help="Index root (default $PARAAGENT_INDEX_DIR or ~/.cache/paraagent)."
    ),
]


@dataclass(frozen=True)
class BuildSummary:
    """What ``index build`` did.

    Attributes:
        catalog: The catalog label.
        directory: Where the catalog's embeddings are stored.
        tools: Indexed tools.
        embedded: Documents embedded by this build (0 when everything was on disk).
        reused: Documents whose embeddings were reused.
        seconds: Wall time of the build (catalog loading excluded).
        bytes_on_disk: Size of the stored embedding files.
    """

    catalog: str
    directory: Path
    tools: int
    embedded: int
    reused: int
    seconds: float
    bytes_on_disk: int


def _directory(label: str, index_dir: Path | None) -> Path:
    from ..retrieval import default_index_dir

    return (index_dir or default_index_dir()) / label


def _search_for(
    catalog: ToolCatalog, model: Path | None, index_dir: Path | None
) -> tuple[HybridToolSearch, Path]:
    from ..retrieval import HybridToolSearch, RetrievalConfig

    directory = _directory(catalog.label, index_dir)
    config = RetrievalConfig(model=model, index_dir=directory, exact_threshold=sys.maxsize)
    return HybridToolSearch(config), directory


def require_built(label: str, *, model: Path | None = None, index_dir: Path | None = None) -> None:
    """Check that ``index build`` ran for this catalog label, model and index root.

    Raises:
        UserError: No stored index, with the command that builds it.
    """
    from ..retrieval import EmbeddingStore, encoder_name

    directory = _directory(label, index_dir)
    if not EmbeddingStore(directory, encoder_name(model)).manifest_path.exists():
        raise UserError(
            f"no index for catalog {label!r} in {directory}: "
            "run `paraagent index build` with the same --catalog/--model/--index-dir first"
        )


async def build_index(
    catalog: ToolCatalog,
    *,
    model: Path | None = None,
    index_dir: Path | None = None,
    checkpoint_every: int = 5000,
    on_checkpoint: Callable[[int, int], None] | None = None,
) -> BuildSummary:
    """Embed (what is not embedded yet) and persist the index of ``catalog``.

    New documents are embedded in chunks of ``checkpoint_every``, each saved to disk
    (:func:`~paraagent_runtime.retrieval.prefill.prefill`), so an interrupted build (hours for
    70k tools on two cores) resumes where it stopped.

    Args:
        catalog: The resolved catalog.
        model: Local sentence-transformers directory (``None``: the bundled MiniLM).
        index_dir: Index root; the catalog's files go to ``<index_dir>/<catalog.label>``.
        checkpoint_every: Documents per saved checkpoint.
        on_checkpoint: Called with ``(documents embedded, to embed)`` at the start and after
            each checkpoint.

    Returns:
        Counts, time and the on-disk size.

    Raises:
        UserError: ``checkpoint_every`` is below 1.
    """
    if checkpoint_every < 1:
        raise UserError(f"checkpoint_every must be >= 1, got {checkpoint_every}")
    from ..retrieval.prefill import prefill

    search, directory = _search_for(catalog, model, index_dir)
    tools = catalog.tools
    started = time.perf_counter()
    embedded = await prefill(search, tools, chunk=checkpoint_every, on_progress=on_checkpoint)
    await search.update(tools)
    assert search.last_update is not None
    embedded += search.last_update.embedded
    seconds = time.perf_counter() - started
    stats = search.last_update
    assert stats is not None
    return BuildSummary(
        catalog=catalog.label,
        directory=directory,
        tools=stats.tools,
        embedded=embedded,
        reused=stats.reused + stats.embedded - embedded,
        seconds=seconds,
        bytes_on_disk=sum(p.stat().st_size for p in directory.glob("tool-index-*")),
    )


async def search_index(
    catalog: ToolCatalog,
    query: str,
    *,
    top_k: int = 5,
    mode: str = RetrievalConfig.mode.value,
    model: Path | None = None,
    index_dir: Path | None = None,
) -> list[tuple[str, float]]:
    """Search the persisted index of ``catalog``.

    Tools changed since the build are re-embedded (the index is never silently stale).

    Raises:
        UserError: An empty query, ``top_k`` < 1, an unknown mode, or no index built yet.
    """
    check_query(query, top_k, mode)
    require_built(catalog.label, model=model, index_dir=index_dir)
    search, _ = _search_for(catalog, model, index_dir)
    await search.update(catalog.tools)
    return await search.search(query, top_k=top_k, mode=mode)


def check_query(query: str, top_k: int, mode: str) -> None:
    """Reject an empty query, ``top_k`` < 1 or an unknown mode before anything is loaded.

    Raises:
        UserError: The first problem found.
    """
    from ..retrieval import SearchMode

    if not query.strip():
        raise UserError("empty query: say what the tool should do")
    if top_k < 1:
        raise UserError(f"--top-k must be >= 1, got {top_k}")
    known = [m.value for m in SearchMode]
    if mode not in known:
        raise UserError(f"unknown search mode {mode!r}: use {', '.join(known)}")


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


@index_app.command("build")
def build_command(
    catalog: CatalogOption = "builtin",
    model: ModelOption = None,
    index_dir: IndexDirOption = None,
) -> None:
    """Embed a catalog's tools and persist the index (only new or changed tools are embedded)."""
    from .tool_catalogs import resolve_catalog

    started = time.perf_counter()
    resolved = resolve_catalog(catalog, build_missing=True)
    loaded_s = time.perf_counter() - started

    def saved(done: int, total: int) -> None:
        console.print(f"embedded and saved {done}/{total} new documents", highlight=False)

    summary = asyncio.run(
        build_index(
            resolved,
            model=model,
            index_dir=index_dir,
            checkpoint_every=_CHECKPOINT,
            on_checkpoint=saved if len(resolved.tools) > _CHECKPOINT else None,
        )
    )
    console.print(
        f"indexed {summary.tools} tools of catalog {summary.catalog!r} in {summary.seconds:.1f} s"
        f" (catalog loaded in {loaded_s:.1f} s): embedded {summary.embedded},"
        f" reused {summary.reused}; {_megabytes(summary.bytes_on_disk)} at {summary.directory}",
        highlight=False,
        soft_wrap=True,
    )


@index_app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="What the wanted tool should do.")],
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="Number of results.")] = 5,
    retriever: Annotated[
        SearchMode,
        typer.Option(
            "--retriever",
            "-r",
            help="Keyword (bm25), embedding (dense), both (hybrid), or both per part of a "
            "multi-part request (coverage).",
        ),
    ] = RetrievalConfig.mode,
    catalog: CatalogOption = "builtin",
    model: ModelOption = None,
    index_dir: IndexDirOption = None,
) -> None:
    """Search a built index and print the best tools as a table."""
    from .tool_catalogs import catalog_label, resolve_catalog

    mode = retriever.value
    check_query(query, top_k, mode)
    require_built(catalog_label(catalog), model=model, index_dir=index_dir)
    started = time.perf_counter()
    resolved = resolve_catalog(catalog)
    results = asyncio.run(
        search_index(resolved, query, top_k=top_k, mode=mode, model=model, index_dir=index_dir)
    )
    descriptions = {tool.id: tool.description for tool in resolved.tools}
    table = Table(
        title=f"{mode} search in {resolved.label!r} ({len(resolved.tools)} tools)",
        caption=f"{time.perf_counter() - started:.1f} s including loading",
    )
    widest = max((len(tool_id) for tool_id, _ in results), default=4)
    table.add_column("#", justify="right")
    table.add_column("tool", min_width=min(widest, 64))
    table.add_column("score", justify="right")
    table.add_column("description")
    for rank, (tool_id, score) in enumerate(results, start=1):
        description = " ".join(descriptions.get(tool_id, "").split())
        if len(description) > _DESCRIPTION_CHARS:
            description = description[: _DESCRIPTION_CHARS - 1] + "…"
        table.add_row(str(rank), tool_id, f"{score:.3f}", description)
    console.print(table)

"""Embedding a big pool into an index's on-disk store in saved chunks, with progress.

``HybridToolSearch.update`` embeds everything new in one pass and saves once at the end: fine for
a few thousand tools, but 65k ToolEnv tools take twenty minutes on two cores, silently, and a
stopped run keeps nothing. :func:`prefill` embeds what the store lacks chunk by chunk, saves
after every chunk and reports progress; a rerun resumes where the last one stopped, and the
following ``update`` loads every vector from disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..documents import tool_document
from ..errors import ConfigError
from ..tools import ToolSpec
from .documents import doc_hash
from .store import EmbeddingStore

if TYPE_CHECKING:
    from .index import HybridToolSearch

__all__ = ["Progress", "prefill"]

Progress = Callable[[int, int], None]
"""Called as ``(embedded so far, to embed)`` after every saved chunk (and once at the start)."""


async def prefill(
    search: HybridToolSearch,
    tools: Sequence[ToolSpec],
    *,
    chunk: int = 1024,
    on_progress: Progress | None = None,
) -> int:
    """Embed the documents of ``tools`` that ``search``'s store lacks, saving every ``chunk``.

    Args:
        search: The index whose encoder and ``config.index_dir`` are used.
        tools: The pool to be indexed next.
        chunk: Documents per embedding pass and save.
        on_progress: Progress callback (see :data:`Progress`).

    Returns:
        How many documents were embedded now (0 when the store had them all).

    Raises:
        ConfigError: ``search`` has no ``index_dir`` (nothing to save to) or ``chunk < 1``.
    """
    directory = search.config.index_dir
    if directory is None or chunk < 1:
        raise ConfigError("prefill needs an index with an index_dir and a chunk of at least 1")
    encoder = await asyncio.to_thread(lambda: search.encoder)
    store = EmbeddingStore(directory, encoder.name)
    stored = await asyncio.to_thread(store.load)
    known = set(stored.doc_hashes) if stored is not None else set()
    documents = {doc_hash(document): document for document in map(tool_document, tools)}
    missing = [digest for digest in documents if digest not in known]
    if on_progress is not None:
        on_progress(0, len(missing))
    for start in range(0, len(missing), chunk):
        hashes = missing[start : start + chunk]
        texts = [documents[digest] for digest in hashes]
        vectors = await asyncio.to_thread(encoder.encode, texts)
        await asyncio.to_thread(
            store.save, f"partial:{start + len(hashes)}", hashes, np.asarray(vectors)
        )
        if on_progress is not None:
            on_progress(start + len(hashes), len(missing))
    return len(missing)

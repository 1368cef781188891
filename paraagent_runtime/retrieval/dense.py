"""FAISS inner-product search over unit vectors: exact (flat) for small sets, HNSW for large."""

from __future__ import annotations

import numpy as np

from ._deps import require

__all__ = ["DenseIndex"]


class DenseIndex:
    """A FAISS index over the rows of ``vectors`` (row number = result id).

    Args:
        vectors: ``(n, d)`` float32 unit rows.
        exact_threshold: Use an exact ``IndexFlatIP`` below this many rows, HNSW otherwise.
        hnsw_m: HNSW degree.
        ef_construction: HNSW build beam.
        ef_search: HNSW query beam.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        *,
        exact_threshold: int,
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 256,
    ) -> None:
        faiss = require("faiss")
        self.size, self.dimension = vectors.shape
        self.kind = "flat" if self.size < exact_threshold else "hnsw"
        if self.kind == "flat":
            self._index = faiss.IndexFlatIP(self.dimension)
        else:
            self._index = faiss.IndexHNSWFlat(self.dimension, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            self._index.hnsw.efConstruction = ef_construction
            self._index.hnsw.efSearch = max(ef_search, 1)
        if self.size:
            self._index.add(np.ascontiguousarray(vectors, dtype=np.float32))

    def search(self, queries: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(scores, rows)`` of the ``depth`` nearest rows per query (-1 rows pad)."""
        depth = min(depth, self.size)
        if depth <= 0:
            empty = np.zeros((len(queries), 0))
            return empty.astype(np.float32), empty.astype(np.int64)
        if self.kind == "hnsw":
            self._index.hnsw.efSearch = max(self._index.hnsw.efSearch, depth)
        return self._index.search(np.ascontiguousarray(queries, dtype=np.float32), depth)

    @property
    def ef_search(self) -> int:
        """The HNSW query beam (0 for a flat index)."""
        return int(self._index.hnsw.efSearch) if self.kind == "hnsw" else 0

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if self.kind == "hnsw":
            self._index.hnsw.efSearch = value

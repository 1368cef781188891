"""On-disk persistence of tool embeddings, keyed by catalog hash and model, with a checksum.

Layout in the index directory, one pair of files per model::

    tool-index-<model hash>.npz    embeddings (float32) and the document hash of each row
    tool-index-<model hash>.json   manifest: format, model, catalog key, rows, sha256 of the .npz

A load verifies the manifest, the checksum and the shapes; anything off is logged and treated as
absent, so the caller re-embeds instead of serving wrong vectors. Writes go to a temporary file
and are renamed into place (data first, manifest last), so a crash never leaves a pair that
verifies but disagrees.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["EmbeddingStore", "StoredEmbeddings"]

logger = logging.getLogger(__name__)

_FORMAT = 1


@dataclass(frozen=True)
class StoredEmbeddings:
    """Embeddings read back from disk: one row per document hash."""

    catalog_key: str
    model: str
    doc_hashes: list[str]
    vectors: np.ndarray

    def by_hash(self) -> dict[str, np.ndarray]:
        """Map each document hash to its embedding row."""
        return {digest: self.vectors[row] for row, digest in enumerate(self.doc_hashes)}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class EmbeddingStore:
    """Reads and writes the embedding file of one model in ``directory``.

    Args:
        directory: Where index files live (created on first save).
        model: The encoder's name; part of the file name and checked on load.
    """

    def __init__(self, directory: str | Path, model: str) -> None:
        self.directory = Path(directory).expanduser()
        self.model = model
        stem = f"tool-index-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:12]}"
        self.data_path = self.directory / f"{stem}.npz"
        self.manifest_path = self.directory / f"{stem}.json"

    def save(
        self,
        catalog_key: str,
        doc_hashes: list[str],
        vectors: np.ndarray,
        *,
        keep_previous_rows: int = 100_000,
    ) -> None:
        """Write the embeddings of a catalog, keeping earlier catalogs' rows as a cache.

        Rows of the file already on disk whose document is not in this catalog are kept (up to
        ``keep_previous_rows`` of them), so shrinking a catalog and growing it back, or indexing
        a prefix of a big catalog, never re-embeds what was embedded before.

        Args:
            catalog_key: :func:`~paraagent_runtime.retrieval.documents.catalog_key` of the catalog.
            doc_hashes: One document hash per row of ``vectors``.
            vectors: ``(n, dimension)`` float32 embeddings.
            keep_previous_rows: The most rows of earlier catalogs to carry over (0: none).
        """
        previous = self.load() if keep_previous_rows > 0 else None
        if previous is not None and previous.vectors.shape[1:] == vectors.shape[1:]:
            current = set(doc_hashes)
            extra = [i for i, h in enumerate(previous.doc_hashes) if h not in current]
            extra = extra[:keep_previous_rows]
            if extra:
                doc_hashes = [*doc_hashes, *(previous.doc_hashes[i] for i in extra)]
                vectors = np.concatenate([vectors, previous.vectors[extra]])
        self.directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as buffer:
            np.savez(buffer, vectors=vectors, doc_hashes=np.asarray(doc_hashes, dtype="U64"))
            buffer.seek(0)
            payload = buffer.read()
        _atomic_write(self.data_path, payload)
        manifest = {
            "format": _FORMAT,
            "model": self.model,
            "catalog_key": catalog_key,
            "rows": len(doc_hashes),
            "dimension": int(vectors.shape[1]) if vectors.ndim == 2 else 0,
            "sha256": hashlib.sha256(payload).hexdigest(),
        }
        _atomic_write(self.manifest_path, json.dumps(manifest, indent=1).encode("utf-8"))

    def load(self) -> StoredEmbeddings | None:
        """Read and verify the stored embeddings; ``None`` (with a warning) when unusable.

        Returns:
            The stored embeddings, or ``None`` when there is no file or it is corrupt, truncated,
            of another format or written for another model.
        """
        if not self.manifest_path.exists() and not self.data_path.exists():
            return None
        try:
            manifest = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
                return self._reject("unknown manifest format")
            if manifest.get("model") != self.model:
                return self._reject(f"written for model {manifest.get('model')!r}")
            if _sha256(self.data_path) != manifest.get("sha256"):
                return self._reject("checksum mismatch (corrupt or truncated data file)")
            with np.load(self.data_path, allow_pickle=False) as data:
                vectors = np.ascontiguousarray(data["vectors"], dtype=np.float32)
                doc_hashes = [str(value) for value in data["doc_hashes"]]
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            return self._reject(f"unreadable ({type(exc).__name__}: {exc})")
        rows = manifest.get("rows")
        if vectors.ndim != 2 or len(doc_hashes) != rows or vectors.shape[0] != rows:
            return self._reject("row counts disagree")
        return StoredEmbeddings(
            catalog_key=str(manifest.get("catalog_key")),
            model=self.model,
            doc_hashes=doc_hashes,
            vectors=vectors,
        )

    def _reject(self, reason: str) -> None:
        logger.warning("ignoring tool index %s: %s; re-embedding", self.data_path, reason)
        return None

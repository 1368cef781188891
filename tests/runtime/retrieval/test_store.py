"""Persistence: embeddings reload by catalog key; corrupt or stale files are caught and rebuilt."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from paraagent_runtime.retrieval import EmbeddingStore, HybridToolSearch, RetrievalConfig


def _store(index_dir, encoder) -> EmbeddingStore:
    return EmbeddingStore(index_dir, encoder.name)


async def _fresh(index_dir, encoder, tools) -> HybridToolSearch:
    search = HybridToolSearch(RetrievalConfig(index_dir=index_dir), encoder=encoder)
    await search.update(tools)
    return search


async def test_reload_uses_the_stored_embeddings(index_dir, encoder, catalog) -> None:
    search = await _fresh(index_dir, encoder, catalog)
    assert search.last_update.embedded == 0
    assert search.last_update.loaded_from_disk == 200
    assert (await search.search("currency exchange rate", top_k=1))[0][0].startswith("finance/")


@pytest.mark.parametrize("damage", ["truncate", "flip", "manifest", "missing_manifest", "model"])
async def test_damaged_index_is_detected_logged_and_rebuilt(
    index_dir, encoder, catalog, caplog, damage
) -> None:
    store = _store(index_dir, encoder)
    reference = store.load()
    assert reference is not None
    if damage == "truncate":
        data = store.data_path.read_bytes()
        store.data_path.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        data = bytearray(store.data_path.read_bytes())
        data[-100] ^= 0xFF
        store.data_path.write_bytes(bytes(data))
    elif damage == "manifest":
        store.manifest_path.write_text("{not json", encoding="utf-8")
    elif damage == "missing_manifest":
        store.manifest_path.unlink()
    else:
        manifest = json.loads(store.manifest_path.read_text())
        store.manifest_path.write_text(json.dumps({**manifest, "model": "another-model"}))
    with caplog.at_level(logging.WARNING):
        assert store.load() is None
        search = await _fresh(index_dir, encoder, catalog[:20])
    assert "ignoring tool index" in caplog.text
    assert search.last_update.embedded == 20
    repaired = store.load()
    assert repaired is not None and len(repaired.doc_hashes) == 20
    expected = reference.by_hash()
    for digest, vector in repaired.by_hash().items():
        assert np.allclose(vector, expected[digest], atol=1e-5)


async def test_stale_index_is_detected_and_only_changes_are_embedded(
    index_dir, encoder, catalog, caplog
) -> None:
    changed = [
        catalog[0].model_copy(update={"description": "Volcano eruption alerts."}),
        *catalog[1:],
    ]
    with caplog.at_level(logging.INFO):
        search = await _fresh(index_dir, encoder, changed)
    assert "is stale" in caplog.text
    assert search.last_update.embedded == 1
    assert (await search.search("volcano eruption", top_k=1))[0][0] == catalog[0].id
    stored = _store(index_dir, encoder).load()
    # The 200 current rows plus the replaced description's row, kept as cache.
    assert stored is not None and stored.catalog_key != "" and len(stored.doc_hashes) == 201
    again = await _fresh(index_dir, encoder, changed)
    assert again.last_update.embedded == 0


def test_store_round_trip(tmp_path) -> None:
    store = EmbeddingStore(tmp_path / "new", "m")
    assert store.load() is None
    vectors = np.eye(3, dtype=np.float32)
    store.save("key", ["h1", "h2", "h3"], vectors)
    loaded = store.load()
    assert loaded.catalog_key == "key" and loaded.doc_hashes == ["h1", "h2", "h3"]
    assert np.array_equal(loaded.vectors, vectors)
    assert np.array_equal(loaded.by_hash()["h2"], vectors[1])


async def test_indexing_a_prefix_keeps_the_rest_cached(index_dir, encoder, catalog) -> None:
    await _fresh(index_dir, encoder, catalog)
    prefix = await _fresh(index_dir, encoder, catalog[:20])
    assert prefix.last_update.embedded == 0
    whole = await _fresh(index_dir, encoder, catalog)
    assert whole.last_update.embedded == 0 and whole.size == len(catalog)


def test_save_carries_earlier_rows_up_to_a_limit(tmp_path) -> None:
    store = EmbeddingStore(tmp_path, "m")
    store.save("all", ["h1", "h2", "h3"], np.eye(3, dtype=np.float32))
    store.save("one", ["h2"], np.eye(3, dtype=np.float32)[1:2])
    kept = store.load()
    assert kept.catalog_key == "one" and kept.doc_hashes == ["h2", "h1", "h3"]
    assert np.array_equal(kept.by_hash()["h3"], np.eye(3, dtype=np.float32)[2])
    store.save("only", ["h2"], np.eye(3, dtype=np.float32)[1:2], keep_previous_rows=0)
    assert store.load().doc_hashes == ["h2"]

"""Catalog keys of the embedding store."""

from __future__ import annotations

from paraagent_runtime.retrieval import catalog_key


def test_catalog_key_ignores_order_but_sees_every_change() -> None:
    key = catalog_key(["a/x", "b/y"], ["doc x", "doc y"], "m")
    assert key == catalog_key(["b/y", "a/x"], ["doc y", "doc x"], "m")
    assert key != catalog_key(["a/x", "b/y"], ["doc x", "doc y!"], "m")
    assert key != catalog_key(["a/x", "b/y"], ["doc x", "doc y"], "other-model")
    assert key != catalog_key(["a/x"], ["doc x"], "m")

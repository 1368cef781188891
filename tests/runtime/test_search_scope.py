from __future__ import annotations

from pathlib import Path

import pytest

from paraagent_runtime.retrieval import HybridToolSearch
from paraagent_runtime.search import default_tool_search, index_scope


def test_each_tool_space_gets_its_own_index_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAAGENT_INDEX_DIR", str(tmp_path))
    config = tmp_path / "servers.json"
    config.write_text("{}")
    scopes = {
        index_scope(None),
        index_scope(config),
        index_scope(config, with_builtin=False),
        index_scope(tmp_path / "other.json"),
    }
    assert index_scope(None) == "builtin" and len(scopes) == 4
    # The same file reached by another path is the same tool space.
    assert index_scope(tmp_path / "." / "servers.json") == index_scope(config)
    search = default_tool_search(index_scope(config))
    assert isinstance(search, HybridToolSearch)
    assert search.config.index_dir == tmp_path / index_scope(config)

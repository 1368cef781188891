"""A tiny real training run: the adapter it writes loads as the tool-space encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcp_servers.toolenv.catalog.model import Catalog
from mcp_servers.toolenv.catalog.store import save_catalog
from paraagent_runtime.retrieval import SentenceEncoder
from paraagent_runtime.retrieval import bundled as bundled_module
from paraagent_runtime.retrieval.bundled import BASE_MODEL_NAME, TOOLSPACE_MODEL_NAME
from tests.training.retriever.records import RECORDS
from training.retriever import RetrieverTrainConfig
from training.retriever.train import train_retriever

pytest.importorskip("peft")


@pytest.mark.slow
def test_a_tiny_run_writes_an_adapter_the_encoder_merges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = tmp_path / "catalog.jsonl.gz"
    save_catalog(Catalog(records=RECORDS, fingerprint="tiny"), catalog)
    config = RetrieverTrainConfig(
        output_dir=tmp_path / "out",
        catalog=catalog,
        sources=("openapi",),
        query_sets=(),
        holdout_rate=0.001,
        max_pairs=8,
        multi_intent_share=0.0,
        batch_size=4,
        max_seq_length=32,
        lora_rank=2,
        learning_rate=5e-3,
        threads=None,  # leave the test session's torch threads alone
    )
    run = train_retriever(config)
    assert run.summary["steps"] == 2
    assert run.summary["pairs"] == 8 and run.summary["tools"] == len(RECORDS) - 1
    for name in ("adapter_config.json", "adapter_model.safetensors", "training_summary.json"):
        assert (run.output_dir / name).is_file()
    monkeypatch.setitem(bundled_module._ADAPTERS, TOOLSPACE_MODEL_NAME, run.output_dir)
    texts = ["weather forecast for Oslo"]
    trained = SentenceEncoder(TOOLSPACE_MODEL_NAME, backend="torch").encode(texts)
    base = SentenceEncoder(BASE_MODEL_NAME, backend="torch").encode(texts)
    assert not np.array_equal(trained, base)
    np.testing.assert_allclose(np.linalg.norm(trained, axis=1), 1.0, atol=1e-5)

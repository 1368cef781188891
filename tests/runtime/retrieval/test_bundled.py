"""Bundled models: the adapted model's name keys the store, LoRA merges like peft, ONNX agrees."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.retrieval import EmbeddingStore, SentenceEncoder, encoder_name
from paraagent_runtime.retrieval import bundled as bundled_module
from paraagent_runtime.retrieval.bundled import (
    BASE_MODEL_NAME,
    DEFAULT_MODEL_NAME,
    TOOLSPACE_MODEL_NAME,
    bundled_model,
    merge_lora,
)
from paraagent_runtime.retrieval.onnx_backend import onnx_available

TEXTS = ["weather in Paris tomorrow", "convert 20 USD to EUR and book a flight " * 4]


@pytest.fixture(scope="module")
def random_adapter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """A peft LoRA with random (non-zero) weights over the bundled MiniLM, and its vectors."""
    peft = pytest.importorskip("peft")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(
        str(bundled_model(BASE_MODEL_NAME).base_path), device="cpu", local_files_only=True
    )
    config = peft.LoraConfig(
        r=4,
        lora_alpha=8,
        target_modules=["query", "value", "dense"],
        layers_to_transform=[4, 5],
        init_lora_weights=False,
    )
    with warnings.catch_warnings():  # transformers' own deprecation, raised inside peft
        warnings.simplefilter("ignore", FutureWarning)
        model[0].model = peft.get_peft_model(model[0].model, config)
    model.eval()
    expected = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    folder = tmp_path_factory.mktemp("adapter")
    model[0].model.save_pretrained(str(folder))
    return folder, expected


def _adapted(monkeypatch: pytest.MonkeyPatch, folder: Path, backend: str) -> SentenceEncoder:
    monkeypatch.setitem(bundled_module._ADAPTERS, TOOLSPACE_MODEL_NAME, folder)
    return SentenceEncoder(TOOLSPACE_MODEL_NAME, backend=backend)  # type: ignore[arg-type]


def test_base_model_keeps_its_name_and_default_is_a_bundled_model() -> None:
    assert encoder_name(BASE_MODEL_NAME) == BASE_MODEL_NAME
    assert encoder_name(None) == encoder_name(DEFAULT_MODEL_NAME)
    assert bundled_model("/some/dir") is None


def test_adapted_name_carries_the_adapter_digest_and_keys_the_store(
    random_adapter: tuple[Path, np.ndarray], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(bundled_module._ADAPTERS, TOOLSPACE_MODEL_NAME, random_adapter[0])
    shipped = encoder_name(TOOLSPACE_MODEL_NAME)
    assert shipped.startswith(f"{TOOLSPACE_MODEL_NAME}@") and len(shipped.split("@")[1]) == 12
    changed = tmp_path / "changed"
    shutil.copytree(random_adapter[0], changed)
    weights = changed / "adapter_model.safetensors"
    weights.write_bytes(weights.read_bytes() + b" ")
    monkeypatch.setitem(bundled_module._ADAPTERS, TOOLSPACE_MODEL_NAME, changed)
    retrained = encoder_name(TOOLSPACE_MODEL_NAME)
    assert retrained != shipped
    stores = [EmbeddingStore(tmp_path, name) for name in (shipped, retrained, BASE_MODEL_NAME)]
    assert len({store.data_path for store in stores}) == 3


def test_merged_lora_matches_peft(
    random_adapter: tuple[Path, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, expected = random_adapter
    encoder = _adapted(monkeypatch, folder, "torch")
    base = SentenceEncoder(BASE_MODEL_NAME, backend="torch")
    merged = encoder.encode(TEXTS)
    np.testing.assert_allclose(merged, expected, atol=2e-5)
    assert not np.allclose(merged, base.encode(TEXTS), atol=1e-3)


@pytest.mark.skipif(not onnx_available(), reason="onnx/onnxruntime not installed")
def test_onnx_export_of_the_adapted_model_matches_torch(
    random_adapter: tuple[Path, np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    folder, expected = random_adapter
    monkeypatch.setenv("PARAAGENT_CACHE", str(tmp_path))
    encoder = _adapted(monkeypatch, folder, "onnx")
    assert encoder.backend == "onnx"
    np.testing.assert_allclose(encoder.encode(TEXTS), expected, atol=2e-5)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"use_dora": True}, "only plain LoRA"),
        ({"rank_pattern": {"query": 8}}, "per-module"),
    ],
)
def test_unsupported_adapters_are_refused(
    random_adapter: tuple[Path, np.ndarray], tmp_path: Path, change: dict, message: str
) -> None:
    import torch

    folder = tmp_path / "adapter"
    shutil.copytree(random_adapter[0], folder)
    config = json.loads((folder / "adapter_config.json").read_text())
    (folder / "adapter_config.json").write_text(json.dumps({**config, **change}))
    with pytest.raises(ConfigError, match=message):
        merge_lora(torch.nn.Linear(2, 2), folder)


def test_an_adapter_for_other_layers_is_refused(random_adapter: tuple[Path, np.ndarray]) -> None:
    import torch

    with pytest.raises(ConfigError, match="not a linear layer"):
        merge_lora(torch.nn.Sequential(torch.nn.Linear(2, 2)), random_adapter[0])


def test_the_shipped_adapter_loads_and_its_onnx_export_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAAGENT_CACHE", str(tmp_path))
    backends = ("onnx", "torch") if onnx_available() else ("torch",)
    encoders = [SentenceEncoder(TOOLSPACE_MODEL_NAME, backend=b) for b in backends]  # type: ignore[arg-type]
    assert {encoder.name for encoder in encoders} == {encoder_name(TOOLSPACE_MODEL_NAME)}
    assert [encoder.backend for encoder in encoders] == list(backends)
    vectors = [encoder.encode(TEXTS) for encoder in encoders]
    np.testing.assert_allclose(vectors[0], vectors[-1], atol=2e-5)
    base = SentenceEncoder(BASE_MODEL_NAME, backend="torch").encode(TEXTS)
    assert not np.allclose(vectors[-1], base, atol=1e-3)

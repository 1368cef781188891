"""The ONNX Runtime backend of the sentence encoder: same vectors as PyTorch, cached export,
int8 queries close to float32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.retrieval import HybridToolSearch, RetrievalConfig, SentenceEncoder
from paraagent_runtime.retrieval.onnx_backend import PADDING_SLACK, length_groups, onnx_available

pytestmark = pytest.mark.skipif(not onnx_available(), reason="onnx/onnxruntime not installed")

TEXTS = [
    "weather",
    "Convert 20 degrees Celsius to Fahrenheit and tell me the forecast for Paris tomorrow",
    "Wie wird das Wetter morgen in Berlin?",
    "東京の天気を教えてください",
    "search flights " * 120,  # truncated to the model's maximum length
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The paraagent cache (``$PARAAGENT_CACHE``) the module's encoder exports into."""
    return tmp_path_factory.mktemp("paraagent-cache")


@pytest.fixture(scope="module")
def onnx_encoder(onnx_cache: Path) -> SentenceEncoder:
    import os

    previous = os.environ.get("PARAAGENT_CACHE")
    os.environ["PARAAGENT_CACHE"] = str(onnx_cache)
    try:
        return SentenceEncoder(backend="onnx")
    finally:
        if previous is None:
            os.environ.pop("PARAAGENT_CACHE")
        else:
            os.environ["PARAAGENT_CACHE"] = previous


def test_onnx_vectors_match_torch_alone_and_padded_in_a_batch(
    onnx_encoder: SentenceEncoder,
) -> None:
    torch_encoder = SentenceEncoder(backend="torch")
    assert (onnx_encoder.backend, torch_encoder.backend) == ("onnx", "torch")
    reference = torch_encoder.encode(TEXTS)
    batched = onnx_encoder.encode(TEXTS)
    alone = np.concatenate([onnx_encoder.encode([text]) for text in TEXTS])
    for vectors in (batched, alone):
        assert vectors.shape == reference.shape and vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert np.min(np.sum(vectors * reference, axis=1)) > 1 - 1e-5


def test_the_export_is_cached_and_a_corrupt_one_is_exported_again(
    onnx_encoder: SentenceEncoder, onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One graph per model, under onnx/ in the paraagent cache.
    (export,) = _exports(onnx_cache)
    monkeypatch.setenv("PARAAGENT_CACHE", str(onnx_cache))
    stamp = export.stat().st_mtime_ns
    again = SentenceEncoder(backend="onnx")
    assert again.backend == "onnx"
    assert _exports(onnx_cache) == [export]
    assert export.stat().st_mtime_ns == stamp
    export.write_bytes(b"not an onnx graph")
    repaired = SentenceEncoder(backend="onnx")
    assert export.stat().st_size > 1_000_000
    np.testing.assert_allclose(
        repaired.encode(TEXTS[:2]), onnx_encoder.encode(TEXTS[:2]), atol=1e-6
    )


def _exports(cache: Path) -> list[Path]:
    """The float32 exports in a paraagent cache (not the int8 query graphs beside them)."""
    return [path for path in (cache / "onnx").glob("*.onnx") if not path.stem.endswith("-int8")]


def test_int8_queries_stay_close_to_float32_and_their_graph_is_cached(
    onnx_encoder: SentenceEncoder,
    onnx_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert onnx_encoder.query_precision == "int8"
    documents = onnx_encoder.encode(TEXTS)
    queries = onnx_encoder.encode_queries(TEXTS)
    cosines = np.sum(documents * queries, axis=1)
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    # Quantized (not the float32 graph again), yet as close as on the retrieval dev queries.
    assert cosines.max() < 1 - 1e-5
    assert cosines.mean() > 0.98 and cosines.min() > 0.95
    (quantized,) = (onnx_cache / "onnx").glob("*-int8.onnx")
    (export,) = _exports(onnx_cache)
    assert quantized.name == f"{export.stem}-int8.onnx"
    # A new encoder reuses the cached graph; a corrupt one is quantized again.
    monkeypatch.setenv("PARAAGENT_CACHE", str(onnx_cache))
    stamp = quantized.stat().st_mtime_ns
    np.testing.assert_allclose(SentenceEncoder().encode_queries(TEXTS), queries, atol=1e-6)
    assert quantized.stat().st_mtime_ns == stamp
    quantized.write_bytes(b"not an onnx graph")
    import logging

    # Quantizing drops the quantizer's advice (root-logger warnings from its package) and
    # nothing else, then leaves the root logger as it was.
    filters = list(logging.root.filters)
    with caplog.at_level(logging.INFO):
        np.testing.assert_allclose(SentenceEncoder().encode_queries(TEXTS), queries, atol=1e-6)
    assert not [r for r in caplog.records if "onnxruntime" in r.pathname]
    assert any("quantized the query encoder" in r.getMessage() for r in caplog.records)
    assert logging.root.filters == filters
    assert quantized.stat().st_size > 1_000_000


def test_float32_queries_are_embedded_like_documents(
    onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAAGENT_CACHE", str(onnx_cache))
    encoder = SentenceEncoder(backend="onnx", query_precision="float32")
    np.testing.assert_array_equal(encoder.encode_queries(TEXTS), encoder.encode(TEXTS))
    torch_encoder = SentenceEncoder(backend="torch")
    np.testing.assert_array_equal(torch_encoder.encode_queries(TEXTS), torch_encoder.encode(TEXTS))


def test_copies_of_a_model_share_one_export(tmp_path: Path) -> None:
    import os

    from paraagent_runtime.retrieval.onnx_backend import _export_key

    weights = os.urandom(3 << 20)
    copies = [tmp_path / "a" / "model", tmp_path / "b" / "model"]
    for stamp, copy in enumerate(copies):
        copy.mkdir(parents=True)
        (copy / "config.json").write_text("{}")
        (copy / "model.safetensors").write_bytes(weights)
        os.utime(copy / "model.safetensors", ns=(stamp, stamp))
    assert _export_key(copies[:1]) == _export_key(copies[1:])
    changed = bytearray(weights)
    changed[-1] ^= 1
    (copies[1] / "model.safetensors").write_bytes(bytes(changed))
    assert _export_key(copies[:1]) != _export_key(copies[1:])


def test_an_index_built_with_torch_serves_onnx_queries(
    onnx_encoder: SentenceEncoder, catalog, index_dir: Path
) -> None:
    import asyncio

    search = HybridToolSearch(RetrievalConfig(index_dir=index_dir), encoder=onnx_encoder)
    asyncio.run(search.update(catalog))
    assert search.last_update is not None and search.last_update.embedded == 0
    hits = asyncio.run(search.search("current weather forecast for a city", mode="dense"))
    assert hits and "weather" in hits[0][0]


def test_unknown_backends_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="backend"):
        SentenceEncoder(backend="tensorrt")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="encoder_backend"):
        RetrievalConfig(encoder_backend="tensorrt")
    for bad in (
        lambda: SentenceEncoder(query_precision="int4"),  # type: ignore[arg-type]
        lambda: RetrievalConfig(query_precision="fp16"),
    ):  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="query precision must be one of float32, int8"):
            bad()


def test_auto_falls_back_to_torch_when_onnx_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from paraagent_runtime.retrieval import encoder as encoder_module

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("onnxruntime cannot load the graph")

    monkeypatch.setattr(encoder_module, "OnnxTransformer", broken)
    assert SentenceEncoder(backend="auto").backend == "torch"
    with pytest.raises(ConfigError, match="ONNX backend failed"):
        SentenceEncoder(backend="onnx")


@pytest.mark.parametrize(
    ("lengths", "groups"),
    [
        ([], []),
        ([7], [[7]]),
        # A request and its short needs: the needs run together, the request alone.
        ([12, 12, 14, 15, 60], [[12, 12, 14, 15], [60]]),
        ([10, 10, 10, 10], [[10, 10, 10, 10]]),
        ([5, 9, 30, 31, 200], [[5, 9], [30, 31], [200]]),
    ],
)
def test_length_groups_bound_the_padding(lengths, groups) -> None:
    cut = length_groups(lengths)
    assert [lengths[part] for part in cut] == groups
    for part in cut:
        run = lengths[part]
        assert len(run) == 1 or max(run) * len(run) <= PADDING_SLACK * sum(run)

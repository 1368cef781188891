"""Fixtures for the policy tests.

A tiny random-init model with SmolLM2's tokenizer, built once per session, and its export.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from paraagent_runtime.policy.smollm2 import smollm2_dir
from paraagent_runtime.policy.tiny import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 64-wide Llama with the real SmolLM2 tokenizer and chat template."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"), seed=0)


@pytest.fixture(scope="session")
def smollm2_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real SmolLM2-135M-Instruct export.

    The user's cache when present, else a session tmp dir.
    """
    from paraagent_runtime.policy.smollm2 import ensure_smollm2

    cached = smollm2_dir()
    if (cached / "config.json").is_file():
        return cached
    return ensure_smollm2(tmp_path_factory.mktemp("smollm2") / "smollm2-135m-instruct")


@pytest.fixture(scope="session")
def varied_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with wide random weights: its greedy turns vary from token to token.

    At the default init scale a random model repeats one token greedily, which would make
    batched-vs-solo equality trivially true.
    """
    import torch
    from transformers import AutoModelForCausalLM

    path = tmp_path_factory.mktemp("varied-model")
    shutil.copytree(tiny_model_dir, path, dirs_exist_ok=True)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for weight in model.parameters():
            if weight.dim() >= 2:
                weight.copy_(torch.randn(weight.shape, generator=generator) * 0.5)
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def export_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests' ONNX Runtime GenAI exports live (one per session)."""
    return tmp_path_factory.mktemp("ort-exports")


@pytest.fixture(scope="session")
def varied_export(varied_model_dir: Path, export_cache: Path) -> Path:
    """The varied tiny model (greedy turns vary token to token), exported once."""
    from paraagent_runtime.policy.ort_export import ensure_ort_model

    return ensure_ort_model(varied_model_dir, cache_dir=export_cache)

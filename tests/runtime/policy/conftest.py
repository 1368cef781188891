"""Fixtures for the policy tests: a tiny random-init model with SmolLM2's tokenizer, built once per session."""

from __future__ import annotations

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
    """The real SmolLM2-135M-Instruct export: the user's cache when present, else a session tmp dir."""
    from paraagent_runtime.policy.smollm2 import ensure_smollm2

    cached = smollm2_dir()
    if (cached / "config.json").is_file():
        return cached
    return ensure_smollm2(tmp_path_factory.mktemp("smollm2") / "smollm2-135m-instruct")

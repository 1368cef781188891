"""Fixtures for the algorithm tests: a tiny random-init model, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from paraagent_runtime.policy.tiny import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(
        tmp_path_factory.mktemp("tiny-algo"), hidden_size=32, num_layers=1, seed=0
    )

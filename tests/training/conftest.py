from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from training.demos import DemoBuild, DemoConfig, build_demos


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> DemoBuild:
    """A few dozen paraact demos over every task family (built once per session)."""
    config = DemoConfig(
        n_tasks=36, seed=3, search_top_k=2, output_dir=tmp_path_factory.mktemp("demos")
    )
    return asyncio.run(build_demos(config))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-init Llama with SmolLM2's tokenizer and chat template."""
    from paraagent_runtime.policy.tiny import build_tiny_model

    return build_tiny_model(
        tmp_path_factory.mktemp("tiny"), hidden_size=32, num_layers=1, num_heads=2
    )


@pytest.fixture(scope="session")
def tiny_adapter(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA adapter directory on ``tiny_model``, like the SFT stage writes."""
    from .rl.helpers import sft_adapter

    return sft_adapter(tiny_model, tmp_path_factory.mktemp("adapter"))

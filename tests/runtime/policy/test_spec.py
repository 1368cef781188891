"""policy_from_spec: the one backend registry, and the errors for bad specs and missing extras."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import paraagent_runtime.policy as policy_package
from paraagent_runtime.errors import ConfigError, UserError
from paraagent_runtime.policy import (
    OnnxGenAIPolicy,
    OpenAICompatiblePolicy,
    ScriptedPolicy,
    TransformersPolicy,
    policy_from_spec,
)


async def test_openai_spec_uses_base_url_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    policy = policy_from_spec("openai:Qwen/Qwen3-4B", base_url="http://127.0.0.1:9/v1/")
    assert isinstance(policy, OpenAICompatiblePolicy)
    assert (policy.model, policy.url) == ("Qwen/Qwen3-4B", "http://127.0.0.1:9/v1/chat/completions")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.1:8000/v1")
    assert policy_from_spec("openai:m").url == "http://10.0.0.1:8000/v1/chat/completions"


def test_openai_spec_without_server_or_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        policy_from_spec("openai:m")
    with pytest.raises(ConfigError, match="name the model"):
        policy_from_spec("openai:", base_url="http://x/v1")


@pytest.mark.parametrize("backend", ["local", "transformers", "onnx"])
def test_local_spec_builds_a_local_policy(backend: str, tiny_model_dir: Path) -> None:
    policy = policy_from_spec(f"{backend}:{tiny_model_dir}", max_new_tokens=4)
    assert isinstance(policy, TransformersPolicy | OnnxGenAIPolicy)
    assert policy.model_name == tiny_model_dir.name and policy.adapter is None
    assert policy_from_spec(backend).model_name == "smollm2-135m-instruct"
    assert isinstance(policy_from_spec(f"transformers:{tiny_model_dir}"), TransformersPolicy)


@pytest.mark.parametrize("backend", ["local", "transformers", "onnx"])
def test_local_spec_with_an_adapter_dir_applies_it_to_the_base(
    backend: str, tiny_model_dir: Path, tmp_path: Path
) -> None:
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}", encoding="utf-8")
    (adapter / "adapter_model.safetensors").write_bytes(b"")  # routing only: never loaded
    policy = policy_from_spec(f"{backend}:{adapter}", model=str(tiny_model_dir))
    assert isinstance(policy, TransformersPolicy | OnnxGenAIPolicy)
    assert policy.model_name == tiny_model_dir.name
    assert policy.adapter == adapter


async def test_scripted_spec_reads_a_jsonl_file(tmp_path: Path) -> None:
    script = tmp_path / "turns.jsonl"
    script.write_text(json.dumps("<answer>42</answer>") + "\n")
    policy = policy_from_spec(f"scripted:{script}")
    assert isinstance(policy, ScriptedPolicy)
    assert (await policy.complete([])).text == "<answer>42</answer>"
    with pytest.raises(ConfigError, match="name the script"):
        policy_from_spec("scripted:")


@pytest.mark.parametrize("spec", ["gpt4", "anthropic:claude", "", "hf:x"])
def test_unknown_spec_lists_the_valid_ones(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        policy_from_spec(spec)
    for prefix in ("openai:<model>", "local[:<dir>]", "vllm:<model>", "scripted:<file.jsonl>"):
        assert prefix in str(info.value)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_without_the_extra_names_it() -> None:
    with pytest.raises(UserError, match=r"install the `vllm` extra"):
        policy_from_spec("vllm:Qwen/Qwen3-4B")
    with pytest.raises(ConfigError, match="name the model"):
        policy_from_spec("vllm:")


def test_public_api_matches_all() -> None:
    public = {name for name in dir(policy_package) if not name.startswith("_")}
    exported = set(policy_package.__all__)
    assert exported <= public | {"OnnxGenAIPolicy", "TransformersPolicy", "VLLMPolicy"}
    assert policy_package.VLLMPolicy.__name__ == "VLLMPolicy"
    with pytest.raises(AttributeError):
        policy_package.NoSuchPolicy  # noqa: B018


@pytest.mark.parametrize("spec", ["paraagent", "transformers:paraagent", "onnx:paraagent"])
def test_paraagent_spec_applies_the_shipped_adapter(spec: str, tiny_model_dir: Path) -> None:
    policy = policy_from_spec(spec)
    assert isinstance(policy, TransformersPolicy | OnnxGenAIPolicy)
    assert policy.model_name == "paraagent-135m"
    assert policy.adapter is not None
    assert (policy.adapter / "adapter_model.safetensors").is_file()
    with pytest.raises(ConfigError, match="own adapter"):
        policy_from_spec("paraagent", adapter=str(tiny_model_dir))


def test_the_policy_package_loads_its_backends_on_first_use() -> None:
    import subprocess
    import sys

    code = (
        "import sys, paraagent_runtime.policy as p\n"
        "heavy = ('aiohttp', 'torch', 'onnxruntime_genai')\n"
        "before = sorted(m for m in heavy if m in sys.modules)\n"
        "p.OpenAICompatiblePolicy\n"
        "print(before, 'aiohttp' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[] True"

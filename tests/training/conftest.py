from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from training.demos import DemoBuild, DemoConfig, build_demos

from ..catalog_fixture import small_real_sources


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> DemoBuild:
    """A few dozen paraact demos over every task family (built once per session)."""
    config = DemoConfig(
        n_tasks=36, seed=3, search_top_k=2, output_dir=tmp_path_factory.mktemp("demos")
    )
    return asyncio.run(build_demos(config))


@pytest.fixture(scope="session")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real catalog file: AWS s3/sqs/dynamodb and six Google discovery documents."""
    from mcp_servers.toolenv.catalog import build_catalog
    from mcp_servers.toolenv.catalog.store import save_catalog

    root = tmp_path_factory.mktemp("catalog")
    sources = small_real_sources(root)
    return save_catalog(build_catalog(sources, progress=False), root / "catalog.jsonl.gz")


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


@pytest.fixture(scope="session")
def cold_start(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-init model nudged towards '<answer>…</answer>' (rollouts differ in reward)."""
    import torch

    from mcp_servers.toolenv import ToolEnv
    from paraagent_runtime.agent import Agent, AgentConfig
    from paraagent_runtime.policy.base import SamplingParams
    from paraagent_runtime.policy.tiny import build_tiny_model
    from paraagent_runtime.policy.transformers_local import TransformersPolicy
    from paraagent_runtime.toolspace import Toolspace

    from .rl.helpers import rl_task

    path = build_tiny_model(
        tmp_path_factory.mktemp("rl-tiny"), hidden_size=64, num_layers=1, seed=0
    )
    policy = TransformersPolicy(path)
    task = rl_task()

    async def prompt_ids() -> list[int]:
        toolspace = Toolspace(ToolEnv.builtin().for_task(task).sources)
        await toolspace.refresh()
        config = AgentConfig(strict=True, max_turns=1, sampling=SamplingParams(max_tokens=1))
        episode = await Agent(policy, toolspace, config).run(task.query, task_id=task.id)
        return episode.turns[0].prompt_token_ids

    prompt = asyncio.run(prompt_ids())
    target = policy.tokenizer.encode("<answer>Munich</answer>", add_special_tokens=False)
    target.append(policy.tokenizer.eos_token_id)
    model = policy.model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    ids = torch.tensor([prompt + target])
    for _ in range(60):
        logits = model(input_ids=ids, logits_to_keep=len(target) + 1).logits[0, :-1]
        torch.nn.functional.cross_entropy(logits, torch.tensor(target)).backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(path)
    return path

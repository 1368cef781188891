"""Shared pieces of the RL tests: the task, a small config, an SFT-like LoRA adapter."""

from __future__ import annotations

import warnings
from pathlib import Path

from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

from mcp_servers.toolenv import builtin_tasks
from paraagent_runtime.tasks import Task
from training.rl import RLConfig


def rl_task() -> Task:
    return next(t for t in builtin_tasks() if t.family == "city_pair_facts")


def rl_config(model: Path, out: Path, **overrides: object) -> RLConfig:
    values = dict(
        model=str(model),
        output_dir=out,
        steps=2,
        tasks_per_step=1,
        group_size=4,
        max_turns=1,
        max_new_tokens=10,
        learning_rate=1e-3,
        save_every=1,
        kl_coef=0.05,
    )
    values.update(overrides)
    return RLConfig(**values)


def sft_adapter(base: Path, directory: Path) -> Path:
    """An adapter directory like the SFT stage writes (non-zero B, so it changes the outputs)."""
    config = LoraConfig(
        r=4,
        lora_alpha=8,
        target_modules=["q_proj", "v_proj"],
        init_lora_weights=False,
        lora_dropout=0.1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # peft reads a deprecated transformers alias
        get_peft_model(AutoModelForCausalLM.from_pretrained(base), config).save_pretrained(
            directory
        )
    return directory

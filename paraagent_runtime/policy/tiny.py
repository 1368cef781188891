"""Tiny random-init causal LMs for tests: real transformers models that run in milliseconds.

They use a real tokenizer (SmolLM2's by default, with its chat template), so prompts, token ids
and chat formatting are exactly those of the default model; only the weights are random.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = ["build_tiny_model"]


def build_tiny_model(
    path: str | Path,
    *,
    tokenizer_from: str | Path | PreTrainedTokenizerBase | None = None,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    max_positions: int = 4096,
    seed: int = 0,
) -> Path:
    """Write a random-init Llama-architecture model and its tokenizer to ``path``.

    Args:
        path: the directory to write (created; existing files are overwritten).
        tokenizer_from: a tokenizer, or a model directory to take it from; defaults to the
            SmolLM2 tokenizer (:func:`~.smollm2.load_smollm2_tokenizer`).
        hidden_size: model width; must be divisible by ``num_heads``.
        num_layers: number of decoder layers.
        num_heads: attention heads (key/value heads are half of them, or one).
        max_positions: the longest sequence the model accepts.
        seed: the seed of the random initialization (same seed, same weights).

    Returns:
        The directory, loadable with ``from_pretrained`` or ``TransformersPolicy(path)``.

    Raises:
        ConfigError: the sizes do not fit together.
    """
    if hidden_size % num_heads:
        raise ConfigError(
            f"hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads})"
        )
    if num_layers < 1:
        raise ConfigError(f"num_layers must be >= 1, got {num_layers}")
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    from .smollm2 import load_smollm2_tokenizer

    if tokenizer_from is None:
        tokenizer = load_smollm2_tokenizer()
    elif isinstance(tokenizer_from, str | Path):
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_from)
    else:
        tokenizer = tokenizer_from
    eos = tokenizer.eos_token_id
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=max(1, num_heads // 2),
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=eos, pad_token_id=config.pad_token_id
    )
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path

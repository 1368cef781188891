"""Fine-tune the bundled MiniLM on the tool space: LoRA, in-batch + hard negatives, on CPU.

The run loads the ToolEnv catalog, builds :mod:`.pairs`, wraps the encoder's transformer in a
peft LoRA and trains it with sentence-transformers (``MultipleNegativesRankingLoss`` over
(query, tool document, hard-negative document) triples, batches without duplicate texts). It
writes the adapter (peft's files), the config and a summary to ``output_dir``; copying that
folder to ``paraagent_runtime/retrieval/models/toolspace-minilm`` ships it.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraagent_runtime.retrieval.bundled import BASE_MODEL_NAME
from paraagent_runtime.retrieval.encoder import default_model_path

from ..config import config_to_dict, save_config
from .config import RetrieverTrainConfig
from .pairs import TrainingPair, benchmark_pairs, build_pairs, trainable_records

__all__ = ["RetrieverRun", "load_training_records", "train_retriever"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrieverRun:
    """What a training run wrote and how it went."""

    output_dir: Path
    summary: dict[str, Any]


def load_training_records(config: RetrieverTrainConfig) -> list[Any]:
    """The catalog records the run trains on (see :func:`.pairs.trainable_records`)."""
    from mcp_servers.toolenv.catalog.build import load_catalog

    catalog = load_catalog(config.catalog, progress=False)
    entries = catalog.records
    light = getattr(entries, "entries", entries)
    wanted = [i for i, entry in enumerate(light) if entry.source in config.sources]
    # Materialize only the wanted sources' schemas (the whole catalog is ~65k records).
    records = [entries[i] for i in wanted]
    return trainable_records(records, sources=config.sources, holdout_rate=config.holdout_rate)


def _dataset(pairs: list[TrainingPair]) -> Any:
    from datasets import Dataset

    return Dataset.from_dict(
        {
            "anchor": [pair.query for pair in pairs],
            "positive": [pair.positive for pair in pairs],
            "negative": [pair.negative for pair in pairs],
        }
    )


def train_retriever(config: RetrieverTrainConfig) -> RetrieverRun:
    """Build the pairs, train the LoRA, and write it with its config and summary.

    Returns:
        The output folder and the run summary (pairs by kind, steps, losses, seconds).
    """
    import torch
    from peft import LoraConfig, get_peft_model
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if config.threads:
        torch.set_num_threads(config.threads)
    started = time.perf_counter()
    records = load_training_records(config)
    pairs = build_pairs(
        records,
        queries_per_tool=config.queries_per_tool,
        multi_intent_share=config.multi_intent_share,
        max_pairs=config.max_pairs,
        seed=config.seed,
    )
    if config.query_sets:
        from paraagent_runtime.retrieval.querysets import load_query_sets

        train_part = load_query_sets(parts=("train",), sets=config.query_sets)
        rng = random.Random(config.seed)
        extra = benchmark_pairs(train_part, seed=config.seed)
        pairs += rng.sample(extra, min(len(extra), config.max_query_set_pairs))
        rng.shuffle(pairs)
    logger.info("%d training pairs from %d tools", len(pairs), len(records))
    model = SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)
    model.max_seq_length = config.max_seq_length
    transformer = model[0]
    lora = LoraConfig(
        r=config.lora_rank,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=list(config.target_modules),
        layers_to_transform=list(config.lora_layers),
    )
    with warnings.catch_warnings():  # a transformers deprecation that peft triggers
        warnings.simplefilter("ignore", FutureWarning)
        transformer.model = get_peft_model(transformer.model, lora)
    steps = max(1, math.ceil(len(pairs) * config.epochs / config.batch_size))
    with tempfile.TemporaryDirectory(prefix="retriever-") as scratch:
        arguments = SentenceTransformerTrainingArguments(
            output_dir=scratch,
            max_steps=steps,
            per_device_train_batch_size=config.batch_size,
            learning_rate=config.learning_rate,
            warmup_steps=config.warmup_ratio,
            batch_sampler=BatchSamplers.NO_DUPLICATES,
            logging_steps=max(1, steps // 50),
            save_strategy="no",
            report_to="none",
            seed=config.seed,
            use_cpu=True,
            disable_tqdm=True,
        )
        trainer = SentenceTransformerTrainer(
            model=model,
            args=arguments,
            train_dataset=_dataset(pairs),
            loss=MultipleNegativesRankingLoss(model, scale=config.scale),
        )
        trainer.train()
    out = config.output_dir
    out.mkdir(parents=True, exist_ok=True)
    transformer.model.save_pretrained(str(out))
    (out / "README.md").unlink(missing_ok=True)  # peft's empty template; the card is written
    save_config(config, out / "train_config.json")
    losses = [row["loss"] for row in trainer.state.log_history if "loss" in row]
    summary = {
        "base_model": BASE_MODEL_NAME,
        "tools": len(records),
        "tools_by_source": dict(Counter(record.source for record in records)),
        "pairs": len(pairs),
        "pairs_by_kind": dict(Counter(pair.kind for pair in pairs)),
        "steps": trainer.state.global_step,
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "loss_curve": losses,
        "seconds": round(time.perf_counter() - started, 1),
        "torch_threads": torch.get_num_threads(),
        "config": config_to_dict(config),
    }
    (out / "training_summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return RetrieverRun(output_dir=out, summary=summary)

"""The configuration of a retriever fine-tuning run (``python -m training.retriever``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paraagent_runtime import ConfigError

from ..config import option
from .pairs import check_licenses

__all__ = ["RetrieverTrainConfig"]


@dataclass
class RetrieverTrainConfig:
    """How the bundled embedder is fine-tuned on the tool space (LoRA, contrastive, on CPU)."""

    output_dir: Path = option(
        Path("runs/retriever"), help="Where the adapter, its card and the run summary are written."
    )
    catalog: Path | None = option(
        None, help="A ToolEnv catalog file (None: the cached build of the default sources)."
    )
    sources: tuple[str, ...] = option(
        ("openapi", "toucan", "seal_tools"),
        help="Catalog sources whose documents are trained on: permissively licensed ones only "
        "(pairs.TRAINING_SOURCE_LICENSES; StableToolBench, CC BY-NC 4.0, is refused).",
    )
    holdout_rate: float = option(
        0.1,
        help="catalog_holdout rate: held-out categories and providers are never trained on.",
    )
    query_sets: tuple[str, ...] = option(
        ("seal-tools",),
        help="Query sets whose train part (querysets.load_query_sets) is trained on "
        "(pairs.TRAINING_QUERY_SET_LICENSES).",
    )
    max_query_set_pairs: int = option(
        1_024, help="Cap on pairs from the query sets' train part (a random subset beyond it)."
    )
    queries_per_tool: int = option(2, help="Synthesized queries per tool document.")
    multi_intent_share: float = option(
        0.15, help="Share of extra two-need queries (each need's tool is a positive)."
    )
    max_pairs: int = option(1_024, help="Cap on synthesized pairs (a random subset beyond it).")
    lora_rank: int = option(16, help="LoRA rank of every adapted linear layer.")
    lora_alpha: int = option(32, help="LoRA alpha (the update is scaled by alpha / rank).")
    lora_dropout: float = option(0.05, help="Dropout on the LoRA input.")
    target_modules: tuple[str, ...] = option(
        ("query", "key", "value", "dense"),
        help="Linear layers (by name) that get a LoRA update.",
    )
    lora_layers: tuple[int, ...] = option(
        (2, 3, 4, 5),
        help="Transformer layers adapted (the lower ones stay frozen: no backward through them).",
    )
    epochs: float = option(1.0, help="Passes over the pairs.")
    batch_size: int = option(32, help="Pairs per batch: in-batch negatives come from the others.")
    learning_rate: float = option(1e-3, help="Peak learning rate (linear warm-up, then decay).")
    warmup_ratio: float = option(0.05, help="Share of steps spent warming up.")
    max_seq_length: int = option(48, help="Token cap for documents and queries while training.")
    scale: float = option(20.0, help="Similarity scale of the ranking loss (1 / temperature).")
    seed: int = option(0, help="Seed of the query synthesis, sampling and training.")
    threads: int | None = option(
        1,
        help="Torch CPU threads (None: torch's default); one thread is fastest on shared cores.",
    )

    def __post_init__(self) -> None:
        self.output_dir = Path(self.output_dir)
        self.catalog = Path(self.catalog) if self.catalog is not None else None
        self.sources = tuple(self.sources)
        self.query_sets = tuple(self.query_sets)
        self.target_modules = tuple(self.target_modules)
        self.lora_layers = tuple(self.lora_layers)
        for name in (
            "queries_per_tool",
            "max_pairs",
            "max_query_set_pairs",
            "lora_rank",
            "batch_size",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("multi_intent_share", "lora_dropout", "warmup_ratio"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"{name} must be in [0, 1), got {getattr(self, name)}")
        if not 0.0 < self.holdout_rate < 1.0:
            raise ConfigError(f"holdout_rate must be in (0, 1), got {self.holdout_rate}")
        if self.epochs <= 0 or self.learning_rate <= 0 or self.scale <= 0:
            raise ConfigError("epochs, learning_rate and scale must be > 0")
        if "toucan_crawled" in self.sources:
            raise ConfigError("crawled TOUCAN tools are untyped scrapes; leave them out of sources")
        check_licenses(self.sources, self.query_sets)

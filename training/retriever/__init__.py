"""Fine-tuning the bundled retrieval embedder on the tool space (LoRA, contrastive, on CPU)."""

from __future__ import annotations

from .config import RetrieverTrainConfig

__all__ = ["RetrieverTrainConfig"]

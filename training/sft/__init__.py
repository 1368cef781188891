"""Supervised fine-tuning on ParaAct demonstrations (TRL ``SFTTrainer`` + peft LoRA)."""

from __future__ import annotations

from .config import SFTRunConfig
from .data import ChatEncoder, TokenizedDemos, encode_demo, tokenize_demos
from .trainer import SFTResult, last_checkpoint, prepare_data, train_sft

__all__ = [
    "ChatEncoder",
    "SFTResult",
    "SFTRunConfig",
    "TokenizedDemos",
    "encode_demo",
    "last_checkpoint",
    "prepare_data",
    "tokenize_demos",
    "train_sft",
]

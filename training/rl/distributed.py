"""The trainer's distributed side, all through ``accelerate`` (DDP, FSDP, DeepSpeed ZeRO-2/3).

Under ``accelerate launch`` every process runs its own rollout groups (``tasks_per_step`` tasks
each, a whole group on one process, so group normalization stays local) and the gradient of the
update is averaged across processes. Collective operations need every process to run the same
number of forward/backward passes, so the micro-batch count of a step is the maximum over processes
(a process with fewer rows runs zero-weighted passes). DeepSpeed steps the optimizer inside its
engine after ``gradient_accumulation_steps`` backward passes: under DeepSpeed that setting of the
accelerate config *is* the number of micro-batches per RL step.

A single process (plain ``paraagent train rl``) is the same code with nothing wrapped.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from accelerate import Accelerator

__all__ = ["Parallel"]


class Parallel:
    """Devices, wrapping, backward and collectives of one trainer process.

    Args:
        device: The configured device: ``cpu``, ``cuda`` (this process's GPU under
            ``accelerate launch``) or an explicit ``cuda:N`` (single process).
    """

    def __init__(self, device: str) -> None:
        from accelerate import Accelerator
        from accelerate.state import AcceleratorState

        launched = int(os.environ.get("WORLD_SIZE", "1")) > 1
        if not launched:
            # accelerate keeps one device per process; an earlier run in this process (tests, the
            # ablation) may have fixed another one. transformers' Trainer resets it the same way.
            AcceleratorState._reset_state(reset_partial_state=True)
        # The trainer places the model itself (on this process's device), before prepare().
        self.accelerator: Accelerator = Accelerator(
            cpu=not device.startswith("cuda"), device_placement=False
        )
        self.device = str(self.accelerator.device) if device == "cuda" and launched else device

    @property
    def rank(self) -> int:
        """This process's index."""
        return self.accelerator.process_index

    @property
    def world(self) -> int:
        """Number of processes."""
        return self.accelerator.num_processes

    @property
    def is_main(self) -> bool:
        """Whether this process writes logs, metrics and checkpoints."""
        return self.accelerator.is_main_process

    @property
    def deepspeed(self) -> bool:
        """Whether DeepSpeed runs the optimizer step."""
        return self.accelerator.distributed_type.value == "DEEPSPEED"

    @property
    def sharded(self) -> bool:
        """Whether parameters or optimizer states are sharded (FSDP, DeepSpeed)."""
        return self.accelerator.distributed_type.value in ("DEEPSPEED", "FSDP")

    def prepare(
        self, module: torch.nn.Module, optimizer: torch.optim.Optimizer, micro_batch_rows: int
    ) -> tuple[torch.nn.Module, Any]:
        """Wrap the trained module and its optimizer for the launch's distributed type."""
        plugin = self.accelerator.state.deepspeed_plugin
        if plugin is not None:
            # No dataloader tells DeepSpeed the micro-batch size; the trainer's rows are it.
            plugin.deepspeed_config["train_micro_batch_size_per_gpu"] = micro_batch_rows
        return self.accelerator.prepare(module, optimizer)

    def micro_batches(self, rows: int, micro_batch_rows: int) -> int:
        """Micro-batches this step: the same on every process (DeepSpeed: its accumulation)."""
        if self.deepspeed:
            return int(self.accelerator.gradient_accumulation_steps)
        local = math.ceil(rows / micro_batch_rows) if rows else 1
        if self.world == 1:
            return local
        counts = self.accelerator.gather(torch.tensor([local], device=self.accelerator.device))
        return int(counts.max())

    def backward(self, loss: torch.Tensor) -> None:
        """Backward of a loss already weighted by its share of the step."""
        if self.deepspeed:
            # The engine divides by its accumulation steps; the shares already sum to one.
            loss = loss * self.accelerator.gradient_accumulation_steps
        self.accelerator.backward(loss)

    @contextlib.contextmanager
    def accumulating(self, model: torch.nn.Module, last: bool) -> Iterator[None]:
        """Skip the gradient all-reduce on all but the last micro-batch (DDP, FSDP)."""
        if last or self.world == 1 or self.deepspeed:
            yield
        else:
            with self.accelerator.no_sync(model):
                yield

    def clip(self, parameters: Iterable[torch.nn.Parameter], max_norm: float) -> float:
        """Clip gradients to ``max_norm``; return the norm before clipping.

        Under DeepSpeed the engine clips (its ``gradient_clipping``) and the norm reads 0.
        """
        norm = self.accelerator.clip_grad_norm_(list(parameters), max_norm)
        return float(norm) if norm is not None else 0.0

    def full_state_dict(self, model: torch.nn.Module) -> dict[str, torch.Tensor] | None:
        """The gathered weights of a sharded model (a collective: every process calls it)."""
        if not self.sharded:
            return None
        return self.accelerator.get_state_dict(model)

    def wait(self) -> None:
        """Barrier."""
        self.accelerator.wait_for_everyone()

    def any(self, flag: bool) -> bool:
        """Whether ``flag`` holds on any process (a collective: every process calls it)."""
        if self.world == 1:
            return flag
        value = torch.tensor([float(flag)], device=self.device)
        return bool(self.accelerator.reduce(value, reduction="sum").item() > 0)

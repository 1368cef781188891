"""An explicit GRPO-style trainer over the runtime's agent loop and the ``training.algo`` functions.

Each step: pick ``tasks_per_step`` ToolEnv tasks; run ``group_size`` rollouts of each with the real
:class:`~paraagent_runtime.agent.Agent` and a :class:`TransformersPolicy` sharing the trained model
(each rollout in the task's own environment, :meth:`~training.task_source.TaskSet.env_for`:
built-in or catalog tasks, so a group sees one world); score every episode at the
three reward levels; turn rewards into per-turn advantages; lay the recorded tokens out as rows
(never re-tokenized); take one clipped policy-gradient step on the assistant tokens.

What is trained (:mod:`.model`): all weights, or a LoRA adapter (fresh, or an SFT adapter continued)
with the KL reference being the frozen start or the adapter disabled. The update's forward computes
logits only at positions that predict a trained token (``logits_to_keep``). Where rollouts come
from (:mod:`.rollout`): the trained transformers model, or vLLM (colocated engine or ``vllm
serve``) with the adapter re-published after every update. Several processes (:mod:`.distributed`):
``accelerate launch`` with DDP, FSDP or DeepSpeed; each process rolls out its own groups.

Why not a TRL ``GRPOTrainer`` subclass: in trl 1.x its ``rollout_func`` hook returns one
``(prompt_ids, completion_ids)`` pair per rollout and advantages are computed from scalar rewards
inside ``_generate_and_score_completions``. Our episodes may need several rows (when a chat
template does not re-render a turn to the sampled ids) and our advantages are per token; both would
mean overriding that private, experimental method wholesale. The loop here is small and uses the
same loss (clipped ratio, k3 KL) and the same normalizers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import random
import shutil
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch

from paraagent_runtime import (
    Agent,
    AgentConfig,
    ConfigError,
    Episode,
    EpisodeMetrics,
    Policy,
    SamplingParams,
    Task,
    Toolspace,
    TrajectoryWriter,
)
from paraagent_runtime.concurrency import map_in_order
from training.algo import (
    EpisodeRewards,
    GradientNoise,
    TokenBatch,
    collate,
    episode_rows,
    gradient_noise,
    kept_logprobs,
    logit_positions,
    policy_loss,
    score_episode,
    token_advantages,
    token_weights,
    turn_advantages,
    zero_variance_share,
)
from training.config import save_config
from training.evaluate import EvalSummary, evaluate_policy
from training.task_source import TaskSet

from .config import RLConfig
from .distributed import Parallel
from .model import load_rl_model
from .plot import plot_curves
from .replay import ReplayPool
from .rollout import SharedWeights, rollout_engine

__all__ = ["RLTrainer"]

logger = logging.getLogger(__name__)

_EVAL_CONCURRENCY = 16
"""Held-out episodes run at once (their turns share batched generation)."""

CHECKPOINT = "checkpoint"
METRICS = "metrics.jsonl"
CURVES = "curves.png"


def _prefix_counts(policy: Policy) -> tuple[int, int]:
    """(reused, looked-up) prompt tokens of a local policy's prefix cache; zeros for others."""
    stats = getattr(policy, "prefix_cache_stats", None)
    return (stats.reused_tokens, stats.prompt_tokens) if stats is not None else (0, 0)


def _reuse(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of prompt tokens served from the prefix cache between two counts."""
    looked_up = after[1] - before[1]
    return (after[0] - before[0]) / looked_up if looked_up else 0.0


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    return statistics.fmean(values), statistics.pstdev(values)


class _GroupGradients:
    """Each rollout group's share of the accumulated gradient, read at the groups' last rows."""

    def __init__(self, parameters: list[torch.nn.Parameter], boundaries: set[int]) -> None:
        self._parameters = parameters
        self._boundaries = boundaries
        self._previous: torch.Tensor | None = None
        self._groups: list[torch.Tensor] = []

    def after(self, micro_index: int) -> None:
        """Call after each micro-batch's backward pass."""
        if micro_index not in self._boundaries:
            return
        accumulated = torch.cat(
            [
                (p.grad if p.grad is not None else torch.zeros_like(p)).detach().float().flatten()
                for p in self._parameters
            ]
        )
        previous = self._previous
        self._groups.append(accumulated if previous is None else accumulated - previous)
        self._previous = accumulated

    def result(self) -> GradientNoise | None:
        """The step's gradient noise (``None`` with fewer than two groups)."""
        return gradient_noise(self._groups)


class RLTrainer:
    """Trains a causal LM with group-relative RL on ToolEnv tasks.

    Args:
        config: The run's configuration.
        tasks: Tasks to train on (default: from ``config.tasks_file`` or generated).

    Raises:
        ConfigError: no task to train on, or the checkpoint to resume from is unreadable.
        UserError: a vLLM rollout backend without vLLM, or LoRA without peft.
    """

    def __init__(self, config: RLConfig, *, tasks: Sequence[Task] | None = None) -> None:
        self.config = config
        self.task_set = (
            config.training_task_set() if tasks is None else TaskSet(tasks, config.task_source)
        )
        self.tasks = self.task_set.tasks
        if not self.tasks:
            raise ConfigError("RLTrainer: no tasks to train on")
        # Read before the model loads: a bad replay file fails in a second, not after a minute.
        self.replay = ReplayPool.from_config(config)
        self.output_dir = config.output_dir
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.step = 0
        checkpoint = self.output_dir / CHECKPOINT
        resuming = config.resume and (checkpoint / "state.json").is_file()
        torch.manual_seed(config.seed)
        if config.torch_threads is not None:
            torch.set_num_threads(config.torch_threads)
        self.parallel = Parallel(config.device)
        self.device = self.parallel.device
        local = dataclasses.replace(config, device=self.device)
        engine = rollout_engine(local)
        if self.device.startswith("cuda"):
            torch.cuda.set_device(torch.device(self.device).index or 0)
        self.rl_model = load_rl_model(local, checkpoint=checkpoint if resuming else None)
        self.policy = self.rl_model.policy
        self.engine = engine if engine is not None else SharedWeights(self.rl_model)
        if config.gradient_checkpointing:
            self.rl_model.module.activation_checkpointing_enable(
                activation_checkpointing_kwargs={"use_reentrant": False}
            )
        optimizer = torch.optim.AdamW(
            self.rl_model.trainable_parameters(),
            lr=config.learning_rate,
            weight_decay=config.weight_decay,
        )
        # ``model`` runs the training forward (wrapped for DDP/FSDP/DeepSpeed); generation, the
        # reference and saving use ``rl_model.module``, the same weights unwrapped.
        self.model, self.optimizer = self.parallel.prepare(
            self.rl_model.module, optimizer, config.micro_batch_rows
        )
        # One loop for the run: the policy's generation lock binds to the loop it first ran on.
        self._loop = asyncio.new_event_loop()
        if resuming:
            self._load_state(checkpoint)
        if self.parallel.is_main:
            self._trim_metrics()
        save_config(config, self.output_dir / "config.json")

    def _trim_metrics(self) -> None:
        """Drop logged steps the weights do not contain (a run stopped after its checkpoint).

        Steps after the checkpoint run again on resume; without this their first lines would
        stay in ``metrics.jsonl`` twice.
        """
        path = self.output_dir / METRICS
        if not path.is_file():
            return
        lines = path.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line and json.loads(line)["step"] <= self.step]
        if len(kept) < len(lines):
            logger.warning(
                "%s: dropping %d logged steps after step %d (not in the checkpoint)",
                path,
                len(lines) - len(kept),
                self.step,
            )
            path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")

    # -- rollouts ----------------------------------------------------------------------------

    def _tasks_for(self, step: int) -> list[Task]:
        first = (step * self.parallel.world + self.parallel.rank) * self.config.tasks_per_step
        return [
            self.tasks[(first + i) % len(self.tasks)] for i in range(self.config.tasks_per_step)
        ]

    async def _rollout(self, task: Task, seed: int | None) -> Episode:
        toolspace = Toolspace(self.task_set.env_for(task).sources)
        await toolspace.refresh()
        agent_config = AgentConfig(
            max_turns=self.config.max_turns,
            strict=True,
            sampling=SamplingParams(
                max_tokens=self.config.max_new_tokens,
                temperature=self.config.temperature,
                top_p=self.config.top_p,
                seed=seed,
            ),
        )
        try:
            return await Agent(self.engine.policy, toolspace, agent_config).run(
                task.query, task_id=task.id
            )
        finally:
            await toolspace.aclose()

    async def _rollouts(self, tasks: Sequence[Task], step: int) -> list[Episode]:
        """All rollouts of a step at once; when one fails, the others are cancelled and awaited."""
        jobs: list[tuple[Task, int | None]] = []
        offset = self.parallel.rank * len(tasks)
        for local, task in enumerate(tasks):
            index = offset + local
            for member in range(self.config.group_size):
                seed = random.Random(f"{self.config.seed}:{step}:{index}:{member}").randrange(2**31)
                jobs.append((task, seed if self.config.seeded_rollouts else None))
        return [
            episode
            async for episode in map_in_order(
                lambda job: self._rollout(*job), jobs, concurrency=max(len(jobs), 1)
            )
        ]

    # -- one step ----------------------------------------------------------------------------

    def train_step(self) -> dict[str, Any]:
        """Run one step (rollouts, rewards, advantages, update) and return its metrics."""
        config = self.config
        started = time.perf_counter()
        tasks = self._tasks_for(self.step)
        self.model.eval()
        self._loop.run_until_complete(self.engine.sync(self.rl_model, self.step))
        cache_before = _prefix_counts(self.engine.policy)
        episodes = self._loop.run_until_complete(self._rollouts(tasks, self.step))
        rollout_s = time.perf_counter() - started
        cache_after = _prefix_counts(self.engine.policy)
        groups = [index for index in range(len(tasks)) for _ in range(config.group_size)]
        replayed = self.replay.draw(self.step) if self.replay is not None else []
        update, rewards = self.update_on(
            episodes, [tasks[group] for group in groups], groups, replayed=replayed
        )
        self.step += 1
        generated, replay_tokens = (
            sum(len(turn.token_ids or []) for episode in batch for turn in episode.turns)
            for batch in (episodes, replayed)
        )
        logprobs = [
            lp for episode in episodes for turn in episode.turns for lp in turn.logprobs or []
        ]
        # Rows hold every sampled id; collate cut the ones past max_length.
        truncated = generated + replay_tokens - int(update["train_tokens"])
        if truncated:
            logger.warning(
                "step %d: %d sampled tokens lie past max_length %d and get no gradient; "
                "raise max_length",
                self.step,
                truncated,
                config.max_length,
            )
        metrics = self._metrics(rewards, groups, episodes)
        metrics.update(update)
        metrics.update(
            step=self.step,
            rollout_tokens=generated,
            rollout_tokens_per_s=generated / rollout_s if rollout_s > 0 else 0.0,
            rollout_prefix_reuse=_reuse(cache_before, cache_after),
            # The sampling policy's per-token entropy when T = 1: it rises when updates spread
            # probability away from the sampled tokens.
            rollout_nll=-statistics.fmean(logprobs) if logprobs else 0.0,
            truncated_tokens=truncated,
            replayed_episodes=len(replayed),
            step_time_s=time.perf_counter() - started,
        )
        return metrics

    def update_on(
        self,
        episodes: Sequence[Episode],
        tasks: Sequence[Task],
        groups: Sequence[int],
        *,
        replayed: Sequence[Episode] = (),
    ) -> tuple[dict[str, float], list[EpisodeRewards]]:
        """One optimizer step on given episodes: rewards, advantages, the update (no rollout).

        ``train_step`` calls it on its rollouts; it also trains on (or, with ``gradient_noise``,
        probes the gradient of) recorded episodes. ``tasks[i]`` is the task of ``episodes[i]``
        and ``groups[i]`` its group: advantages are relative within a group. ``replayed``
        episodes join the batch with ``config.replay.advantage`` on every token (one more group
        for the gradient-noise estimate).

        Returns:
            The update's metrics and each (non-replayed) episode's rewards.
        """
        config = self.config
        rewards = [
            score_episode(episode, task, config.reward)
            for episode, task in zip(episodes, tasks, strict=True)
        ]
        per_turn = turn_advantages(rewards, groups, config.advantage)
        per_turn += [
            [config.replay.advantage] * (1 + max((t.index for t in e.turns), default=-1))
            for e in replayed
        ]
        rows = [episode_rows(episode) for episode in [*episodes, *replayed]]
        if any(rows):
            batch = collate(rows, pad_token_id=self._pad_id(), max_length=config.max_length)
            advantages = token_advantages(
                per_turn,
                turn_index=batch.turn_index,
                row_episode=batch.row_episode,
                mask=batch.assistant_mask,
                whiten=config.advantage.estimator == "multilevel" and config.advantage.whiten,
                center=config.advantage.whiten_center,
                negative_weight=config.advantage.negative_weight,
                eps=config.advantage.eps,
                fixed_rows=batch.row_episode >= len(episodes) if replayed else None,
            )
            replay_group = max(groups, default=-1) + 1
            row_groups = [
                groups[episode] if episode < len(episodes) else replay_group
                for episode in batch.row_episode.tolist()
            ]
            update = self._update(batch, advantages, row_groups)
        elif self.parallel.world > 1:
            # The other processes' backward passes wait for this one's.
            update = self._update(None, None)
        else:
            logger.warning("step %d: no episode holds a token; skipping the update", self.step)
            update = dict.fromkeys(
                (
                    "loss",
                    "kl",
                    "clip_fraction",
                    "ratio_mean",
                    "grad_norm",
                    "train_tokens",
                    "train_rows",
                    "advantage_mean",
                ),
                0.0,
            )
        return update, rewards

    def update(self, batch: TokenBatch, advantages: torch.Tensor) -> dict[str, float]:
        """One optimizer step on a collated batch with per-token advantages given.

        The step :meth:`update_on` takes once it has scored its episodes, for advantages computed
        elsewhere: the clipped policy-gradient loss (plus the KL term when the config has a
        reference) on ``batch``'s assistant tokens, aggregated as ``config.aggregation`` says, in
        micro-batches of ``config.micro_batch_rows`` rows that add up to the whole batch's step.
        Collective under ``accelerate launch``: every process calls it.

        Args:
            batch: The rows (see :func:`training.algo.collate`); ``batch.old_logprobs`` holds the
                sampling policy's log-probs of the assistant tokens (e.g. :meth:`logprobs`
                before the step, for an on-policy batch).
            advantages: ``[rows, width]``, each assistant token's advantage (0 elsewhere).

        Returns:
            The update's metrics: ``loss``, ``kl``, ``clip_fraction``, ``ratio_mean``,
            ``grad_norm``, ``train_tokens``, ``train_rows`` and ``advantage_mean``.
        """
        return self._update(batch, advantages)

    @torch.no_grad()
    def logprobs(self, batch: TokenBatch) -> torch.Tensor:
        """The trained model's log-probs of ``batch``'s assistant tokens, as the update scores them.

        Args:
            batch: The rows (see :func:`training.algo.collate`).

        Returns:
            ``[rows, width]`` on the trainer's device: ``log p(token | prefix)`` at each assistant
            token; read it where ``batch.assistant_mask`` is true (elsewhere it holds 0, or the
            log-prob of a column another row trains on).
        """
        return self._logprobs(self.model, batch, logit_positions(batch.assistant_mask))

    def _pad_id(self) -> int:
        tokenizer = self.policy.tokenizer
        return int(
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        )

    def _logprobs(
        self, model: torch.nn.Module, batch: TokenBatch, positions: torch.Tensor
    ) -> torch.Tensor:
        device = self.device
        input_ids = batch.input_ids.to(device)
        output = model(
            input_ids=input_ids,
            attention_mask=batch.attention_mask.to(device),
            logits_to_keep=positions.to(device),
            use_cache=False,
        )
        return kept_logprobs(output.logits, input_ids, positions)

    def _idle_pass(self) -> None:
        """A zero-weighted forward/backward, for a process with fewer micro-batches than others."""
        ids = torch.full((1, 2), self._pad_id(), device=self.device)
        logits = self.model(input_ids=ids, logits_to_keep=1, use_cache=False).logits
        self.parallel.backward(logits.sum() * 0.0)

    def _update(
        self,
        batch: TokenBatch | None,
        advantages: torch.Tensor | None,
        row_groups: Sequence[int] = (),
    ) -> dict[str, float]:
        config = self.config
        device = self.device
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        rows = batch.input_ids.shape[0] if batch is not None else 0
        total_tokens = max(batch.n_assistant_tokens, 1) if batch is not None else 1
        # Normalized over the whole batch, so the micro-batches' losses add up to the batch's.
        weights = (
            token_weights(batch.assistant_mask, config.aggregation, batch.row_episode)
            if batch is not None
            else None
        )
        n_micro = self.parallel.micro_batches(rows, config.micro_batch_rows)
        size = math.ceil(rows / n_micro)
        micro_rows = [
            list(range(start, min(start + size, rows))) for start in range(0, n_micro * size, size)
        ]
        tracker = self._group_tracker(micro_rows, row_groups)
        sums = {"loss": 0.0, "kl": 0.0, "clip_fraction": 0.0, "ratio_mean": 0.0}
        for micro_index, index in enumerate(micro_rows):
            with self.parallel.accumulating(self.model, last=micro_index == n_micro - 1):
                if batch is None or advantages is None or weights is None or not index:
                    self._idle_pass()
                    continue
                micro = batch.select(index)
                mask = micro.assistant_mask.to(device)
                n_tokens = int(mask.sum())
                positions = logit_positions(micro.assistant_mask)
                logprobs = self._logprobs(self.model, micro, positions)
                reference = None
                if self.rl_model.has_reference:
                    with self.rl_model.reference() as frozen:
                        reference = self._logprobs(frozen, micro, positions)
                loss, stats = policy_loss(
                    logprobs,
                    micro.old_logprobs.to(device),
                    advantages[index].to(device),
                    mask,
                    clip_low=config.clip_low,
                    clip_high=config.clip_high,
                    ref_logprobs=reference,
                    kl_coef=config.kl_coef,
                    weights=weights[index].to(device),
                )
                self.parallel.backward(loss)
            if tracker is not None:
                tracker.after(micro_index)
            sums["loss"] += float(loss.detach())
            for name in ("kl", "clip_fraction", "ratio_mean"):
                sums[name] += getattr(stats, name) * n_tokens / total_tokens
        noise = tracker.result() if tracker is not None else None
        grad_norm = 0.0
        if config.max_grad_norm > 0:
            grad_norm = self.parallel.clip(
                self.rl_model.trainable_parameters(), config.max_grad_norm
            )
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.model.eval()
        train_tokens = batch.n_assistant_tokens if batch is not None else 0
        net = 0.0
        if weights is not None and advantages is not None:
            # Weighted as the loss aggregates tokens. Below 0, the update pushes sampled tokens
            # down on the whole (entropy drifts up).
            net = float((advantages * weights.to(advantages.dtype)).sum())
        extra = {}
        if noise is not None:
            extra["grad_snr"] = noise.snr
            if noise.cosine is not None:
                extra["grad_group_cosine"] = noise.cosine
        return {
            **sums,
            "grad_norm": grad_norm,
            "train_tokens": train_tokens,
            "train_rows": rows,
            "advantage_mean": net,
            **extra,
        }

    def _group_tracker(
        self, micro_rows: Sequence[Sequence[int]], row_groups: Sequence[int]
    ) -> _GroupGradients | None:
        """A tracker of each group's gradient, when configured and the micro-batches allow it."""
        if not self.config.gradient_noise or not row_groups:
            return None
        if self.parallel.world > 1 or self.parallel.deepspeed:
            return None
        owners = [{row_groups[row] for row in rows} for rows in micro_rows]
        if any(len(owner) > 1 for owner in owners):
            logger.info("gradient_noise: a micro-batch mixes groups; not measured this step")
            return None
        boundaries = {
            index
            for index, owner in enumerate(owners)
            if owner and (index + 1 == len(owners) or owners[index + 1] != owner)
        }
        return _GroupGradients(list(self.rl_model.trainable_parameters()), boundaries)

    def _metrics(
        self, rewards: Sequence[EpisodeRewards], groups: Sequence[int], episodes: Sequence[Episode]
    ) -> dict[str, Any]:
        trajectory = [r.trajectory for r in rewards]
        metrics: dict[str, Any] = {}
        metrics["reward/trajectory_mean"], metrics["reward/trajectory_std"] = _mean_std(trajectory)
        for kind in ("explore", "execute", "final"):
            values = [s.value for r in rewards for s in r.steps if s.kind == kind]
            metrics[f"reward/step_{kind}_mean"], metrics[f"reward/step_{kind}_std"] = _mean_std(
                values
            )
        for kind in ("explore", "execute"):
            values = [p.value for r in rewards for p in r.phases if p.kind == kind]
            metrics[f"reward/phase_{kind}_mean"], metrics[f"reward/phase_{kind}_std"] = _mean_std(
                values
            )
        metrics["zero_variance_groups"] = zero_variance_share(
            torch.tensor(trajectory, dtype=torch.float64), list(groups)
        )
        metrics["success"] = statistics.fmean(float(r.success) for r in rewards)
        metrics["turns_mean"] = statistics.fmean(len(e.turns) for e in episodes)
        return metrics

    # -- the run -----------------------------------------------------------------------------

    def train(
        self, on_step: Callable[[int, dict[str, Any]], None] | None = None
    ) -> list[dict[str, Any]]:
        """Train until ``config.steps`` or ``config.max_time_s``; log, checkpoint and plot.

        Args:
            on_step: Called on the main process with the step number and its metrics after
                each step (``paraagent train rl`` shows a step counter with it).

        Returns:
            The metrics of the steps run by this call.
        """
        history = []
        metrics_path = self.output_dir / METRICS
        started = time.monotonic()
        budget = self.config.max_time_s
        while self.step < self.config.steps:
            metrics = self.train_step()
            history.append(metrics)
            out_of_time = self.parallel.any(
                budget is not None and time.monotonic() - started >= budget
            )
            last = out_of_time or self.step == self.config.steps
            if not self.parallel.is_main:
                if self.step % self.config.save_every == 0 or last:
                    self.save_checkpoint()
                if out_of_time:
                    break
                continue
            with metrics_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(metrics) + "\n")
            logger.info(
                "step %d: reward %.3f±%.3f success %.2f zero-var %.2f kl %.4f loss %.4f",
                self.step,
                metrics["reward/trajectory_mean"],
                metrics["reward/trajectory_std"],
                metrics["success"],
                metrics["zero_variance_groups"],
                metrics["kl"],
                metrics["loss"],
            )
            if on_step is not None:
                on_step(self.step, metrics)
            if self.step % self.config.save_every == 0 or last:
                self.save_checkpoint()
            if out_of_time:
                logger.info("max_time_s (%.0f s) reached after step %d", budget, self.step)
                break
        if self.parallel.is_main and metrics_path.is_file():
            plot_curves(metrics_path, self.output_dir / CURVES)
        return history

    def evaluate(
        self,
        tasks: Sequence[Task],
        *,
        samples: int = 1,
        temperature: float = 0.0,
        episodes: Path | None = None,
    ) -> tuple[EvalSummary, list[EpisodeMetrics]]:
        """Success of the current policy on ``tasks``, each in its own ToolEnv world.

        Greedy by default; with a ``temperature`` every task runs ``samples`` times (see
        :func:`~training.evaluate.evaluate_policy`). With ``episodes`` the evaluated episodes
        (token ids and log-probs included) replace that JSONL file's content.

        Returns:
            The summary and one row per episode (in task order).
        """
        self.model.eval()
        self._loop.run_until_complete(self.engine.sync(self.rl_model, self.step))
        torch.manual_seed(self.config.seed)  # the start and the final policies sample alike
        if episodes is not None:
            episodes.unlink(missing_ok=True)  # the writer appends; a rerun must not add to it
        with TrajectoryWriter(episodes) if episodes is not None else nullcontext() as writer:
            return self._loop.run_until_complete(
                evaluate_policy(
                    self.engine.policy,
                    tasks,
                    model=f"rl-step-{self.step}",
                    max_turns=self.config.max_turns,
                    max_tokens=self.config.max_new_tokens,
                    temperature=temperature,
                    samples=samples,
                    trajectory=writer,
                    concurrency=min(len(tasks) * samples, _EVAL_CONCURRENCY) or 1,
                    env_factory=self.task_set.env_for,
                )
            )

    def close(self) -> None:
        """Release the rollout engine and close the event loop (no step can run afterwards)."""
        try:
            self._loop.run_until_complete(self.engine.aclose())
        finally:
            self._loop.close()

    def save_checkpoint(self) -> Path:
        """Write weights (adapter with LoRA), tokenizer, optimizer and step to ``checkpoint/``.

        Every process calls it (gathering sharded weights is collective); the main one writes.
        Sharded optimizer states (FSDP, DeepSpeed) are not saved: a resumed run keeps the weights
        and the step and restarts the optimizer moments.
        """
        final = self.output_dir / CHECKPOINT
        state_dict = self.parallel.full_state_dict(self.model)
        if not self.parallel.is_main:
            self.parallel.wait()
            return final
        staging = self.output_dir / f"{CHECKPOINT}.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        self.rl_model.save(staging, state_dict=state_dict)
        if not self.parallel.sharded:
            torch.save(self.optimizer.state_dict(), staging / "optimizer.pt")
        state = {"step": self.step, "torch_rng": torch.get_rng_state().tolist()}
        (staging / "state.json").write_text(json.dumps(state), encoding="utf-8")
        previous = self.output_dir / f"{CHECKPOINT}.old"
        shutil.rmtree(previous, ignore_errors=True)
        if final.exists():
            final.rename(previous)
        staging.rename(final)
        shutil.rmtree(previous, ignore_errors=True)
        self.parallel.wait()
        return final

    def _load_state(self, checkpoint: Path) -> None:
        try:
            state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))
            optimizer = checkpoint / "optimizer.pt"
            if optimizer.is_file():
                self.optimizer.load_state_dict(torch.load(optimizer))
            else:
                logger.warning("%s has no optimizer state; the optimizer restarts", checkpoint)
            torch.set_rng_state(torch.tensor(state["torch_rng"], dtype=torch.uint8))
            self.step = int(state["step"])
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ConfigError(f"cannot resume from {checkpoint}: {exc}") from exc
        logger.info("resumed from %s at step %d", checkpoint, self.step)

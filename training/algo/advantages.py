"""Advantage estimators: GRPO, Dr.GRPO, GDPO and ParaAgent's multi-level decoupled estimator.

Every estimator normalizes rewards *within a rollout group* (the rollouts of one task, which share
its seed and so its world). Groups whose rewards are all equal carry no signal and get exactly zero
advantage before any batch whitening, never NaN.

An episode has three reward levels (:class:`~training.algo.rewards.EpisodeRewards`): its
trajectory reward ``R_traj``, its phase rewards ``p_1..p_m`` (one per explore/execute segment) and
its step rewards ``s_1..s_n`` (one per turn). Its **summed multi-level reward** is the scalar

    ``R_sum = alpha * R_traj + beta * mean(p_1..p_m) + lam * mean(s_1..s_n)``

(a mean over no phase or no step is 0), with the weights ``alpha``, ``beta``, ``lam`` the
multi-level estimator uses. Means, not sums, so a longer episode does not collect more process
reward by being longer. The estimators:

- ``grpo``: ``(R_traj - mean_g) / std_g``, every turn of the episode gets it (trajectory only).
- ``dr_grpo``: ``R_traj - mean_g`` (no std scaling, Dr.GRPO).
- ``grpo_summed``: GRPO of ``R_sum``: the same information as ``multilevel`` and ``gdpo``, but
  the three levels are summed *before* one joint group normalization; broadcast to every turn.
- ``gdpo``: each of the three levels (``R_traj``, ``mean(p)``, ``mean(s)``) normalized in its
  group on its own, the ``alpha``/``beta``/``lam``-weighted sum, then whitened over the batch's
  episodes (GDPO: decoupled normalization per reward, one advantage per episode). Every column is
  centred in its group, so the batch mean is 0 by construction; whitening divides by the batch
  std only, and a no-signal group stays exactly 0.
- ``multilevel``: trajectory, phase and step rewards each normalized in their own pools (the
  trajectory rewards of a group; phases and steps of a group pooled by kind, explore/execute, or
  all together), combined per turn as ``A = alpha*traj + beta*phase + lam*step``; the trainer
  broadcasts turn advantages to tokens and whitens them over the assistant tokens of the batch.
  Whitening re-centres on the batch's token mean by default, which shifts a no-signal group's
  tokens off zero too; ``whiten_center: false`` divides by the std only and keeps them at zero.

``grpo_summed``, ``gdpo`` and ``multilevel`` see exactly the same reward information; they differ
only in where it is normalized (jointly, per level per episode, per level per turn) and so isolate
decoupling from "process reward vs none" (``grpo`` is the trajectory-only floor).

With any estimator, ``negative_weight`` scales the negative token advantages last: 1 is the
estimator as published, 0 reinforces only better-than-group tokens (positive-sample
reinforcement, which sharpens the policy instead of spreading probability away from failures).

Standard deviations are population ones (``ddof=0``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from paraagent_runtime import ConfigError
from training.config import option

from .rewards import EpisodeRewards

__all__ = [
    "AdvantageConfig",
    "Estimator",
    "dr_grpo_advantages",
    "gdpo_advantages",
    "grpo_advantages",
    "group_normalize",
    "level_rewards",
    "masked_whiten",
    "multilevel_turn_advantages",
    "summed_rewards",
    "token_advantages",
    "turn_advantages",
    "zero_variance_share",
]

Estimator = Literal["grpo", "dr_grpo", "grpo_summed", "gdpo", "multilevel"]
Pooling = Literal["kind", "all"]
ESTIMATORS: tuple[str, ...] = ("grpo", "dr_grpo", "grpo_summed", "gdpo", "multilevel")
"""Every estimator's name (one home: the config, the CLI help and the ablation read it)."""
_POOLINGS = ("kind", "all")


@dataclass
class AdvantageConfig:
    """How rewards become advantages.

    Parameters:
        estimator (`str`, defaults to `"multilevel"`): `grpo`, `dr_grpo`, `grpo_summed`, `gdpo`
            or `multilevel`.
        alpha (`float`, defaults to `1.0`): weight of the trajectory level (multilevel,
            grpo_summed, gdpo).
        beta (`float`, defaults to `0.5`): weight of the phase level (the same three).
        lam (`float`, defaults to `0.5`): weight of the step level (the same three).
        step_pooling (`str`, defaults to `"kind"`): normalize step rewards per group and turn kind
            (`kind`: explore, execute and final turns apart) or per group (`all`).
        phase_pooling (`str`, defaults to `"kind"`): the same for phase segments.
        whiten (`bool`, defaults to `True`): whiten multilevel token advantages over the batch.
        whiten_center (`bool`, defaults to `True`): subtract the batch's token mean when
            whitening; `False` only divides by the std, so a group without signal keeps exactly 0
            (with `True` its tokens get the shift `-mean/std`, as every other token does).
        negative_weight (`float`, defaults to `1.0`): scale of negative token advantages (after
            whitening); 0 keeps only the positive ones.
        eps (`float`, defaults to `1e-6`): added to standard deviations.
    """

    estimator: Estimator = option(
        "multilevel", help="grpo, dr_grpo, grpo_summed, gdpo or multilevel."
    )
    alpha: float = option(1.0, help="Weight of the trajectory level (multilevel, summed, gdpo).")
    beta: float = option(0.5, help="Weight of the phase level (multilevel, summed, gdpo).")
    lam: float = option(0.5, help="Weight of the step level (multilevel, summed, gdpo).")
    step_pooling: Pooling = option(
        "kind", help="Pool steps per group by turn kind (kind) or not (all)."
    )
    phase_pooling: Pooling = option(
        "kind", help="Pool phases per group by kind (kind) or not (all)."
    )
    whiten: bool = option(True, help="Whiten multilevel token advantages over the batch.")
    whiten_center: bool = option(
        True, help="Subtract the batch token mean when whitening (false: divide by the std only)."
    )
    negative_weight: float = option(
        1.0, help="Scale of negative token advantages (0: reinforce only the positive ones)."
    )
    eps: float = option(1e-6, help="Added to standard deviations.")

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ConfigError(
                f"AdvantageConfig.estimator: unknown {self.estimator!r} "
                f"(use one of {', '.join(ESTIMATORS)})"
            )
        for name in ("step_pooling", "phase_pooling"):
            if getattr(self, name) not in _POOLINGS:
                raise ConfigError(
                    f"AdvantageConfig.{name}: use kind or all, got {getattr(self, name)!r}"
                )
        for name in ("alpha", "beta", "lam", "negative_weight"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(
                    f"AdvantageConfig.{name}: must be a finite number >= 0, got {value}"
                )
        if self.alpha + self.beta + self.lam == 0:
            raise ConfigError(
                "AdvantageConfig: alpha, beta and lam are all 0; no signal would remain"
            )
        if not self.eps > 0:
            raise ConfigError(f"AdvantageConfig.eps: must be > 0, got {self.eps}")


def _pool_ids(keys: Sequence[Hashable]) -> tuple[torch.Tensor, int]:
    index: dict[Hashable, int] = {}
    ids = [index.setdefault(key, len(index)) for key in keys]
    return torch.tensor(ids, dtype=torch.long), len(index)


def group_normalize(
    values: torch.Tensor, keys: Sequence[Hashable], *, scale: bool = True, eps: float = 1e-6
) -> torch.Tensor:
    """Center ``values`` within the pools named by ``keys`` and (optionally) divide by the pool std.

    A pool whose values are all equal (one member included) gets exact zeros.

    Args:
        values: 1-D float tensor.
        keys: One hashable pool key per value.
        scale: Divide by the pool's standard deviation (GRPO) or not (Dr.GRPO).
        eps: Added to the standard deviation.

    Raises:
        ConfigError: ``values`` is not 1-D or ``keys`` has another length.
    """
    if values.dim() != 1 or len(keys) != values.numel():
        raise ConfigError(
            f"group_normalize: need a 1-D tensor and one key per value, got shape "
            f"{tuple(values.shape)} and {len(keys)} keys"
        )
    if values.numel() == 0:
        return values.clone()
    x = values.double()
    ids, n = _pool_ids(keys)
    counts = torch.zeros(n, dtype=x.dtype).index_add_(0, ids, torch.ones_like(x))
    means = torch.zeros(n, dtype=x.dtype).index_add_(0, ids, x) / counts
    highs = torch.full((n,), -math.inf, dtype=x.dtype).scatter_reduce(0, ids, x, "amax")
    lows = torch.full((n,), math.inf, dtype=x.dtype).scatter_reduce(0, ids, x, "amin")
    constant = (highs == lows)[ids]
    centered = torch.where(constant, torch.zeros_like(x), x - means[ids])
    if scale:
        var = torch.zeros(n, dtype=x.dtype).index_add_(0, ids, centered**2) / counts
        centered = centered / (var.sqrt()[ids] + eps)
    return centered.to(values.dtype)


def zero_variance_share(values: torch.Tensor, keys: Sequence[Hashable]) -> float:
    """The share of pools whose values are all equal (they yield no gradient under GRPO)."""
    if values.numel() == 0:
        return 0.0
    ids, n = _pool_ids(keys)
    x = values.double()
    highs = torch.full((n,), -math.inf, dtype=x.dtype).scatter_reduce(0, ids, x, "amax")
    lows = torch.full((n,), math.inf, dtype=x.dtype).scatter_reduce(0, ids, x, "amin")
    return float((highs == lows).double().mean())


def masked_whiten(
    values: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    eps: float = 1e-6,
    center: bool = True,
) -> torch.Tensor:
    """``(x - mean) / std`` over the entries where ``mask`` is true; masked-out entries become 0.

    With ``center=False`` the result is ``x / std`` (the std is still taken around the mean), so
    zeros stay zeros.
    """
    mask = torch.ones_like(values, dtype=torch.bool) if mask is None else mask.bool()
    selected = values[mask].double()
    if selected.numel() == 0:
        return torch.zeros_like(values)
    mean = selected.mean()
    std = (selected - mean).pow(2).mean().sqrt()
    if float(std) == 0.0:
        return torch.zeros_like(values)
    shifted = values.double() - mean if center else values.double()
    out = (shifted / (std + eps)).to(values.dtype)
    return torch.where(mask, out, torch.zeros_like(out))


def grpo_advantages(
    rewards: torch.Tensor, groups: Sequence[Hashable], *, eps: float = 1e-6
) -> torch.Tensor:
    """GRPO: each rollout's reward standardized within its group."""
    return group_normalize(rewards, groups, scale=True, eps=eps)


def dr_grpo_advantages(rewards: torch.Tensor, groups: Sequence[Hashable]) -> torch.Tensor:
    """Dr.GRPO: each rollout's reward centered within its group, without std scaling."""
    return group_normalize(rewards, groups, scale=False)


def gdpo_advantages(
    rewards: torch.Tensor,
    groups: Sequence[Hashable],
    weights: Sequence[float] | torch.Tensor,
    *,
    eps: float = 1e-6,
) -> torch.Tensor:
    """GDPO: standardize each reward column in its group, take the weighted sum, whiten the batch.

    Every column is centred in its group, so the weighted sum has batch mean 0: whitening only
    divides by the batch std, and a group with no signal in any column stays exactly 0.

    Args:
        rewards: ``[N, K]`` — N rollouts, K reward components.
        groups: One group key per rollout.
        weights: K weights.
        eps: Added to standard deviations.

    Raises:
        ConfigError: the shapes do not fit.
    """
    weights = torch.as_tensor(weights, dtype=rewards.dtype)
    if rewards.dim() != 2 or weights.shape != (rewards.shape[1],):
        raise ConfigError(
            f"gdpo_advantages: need rewards [N, K] and K weights, got {tuple(rewards.shape)} "
            f"and {tuple(weights.shape)}"
        )
    columns = [group_normalize(rewards[:, k], groups, eps=eps) for k in range(rewards.shape[1])]
    combined = torch.stack(columns, dim=1) @ weights if columns else torch.zeros(rewards.shape[0])
    return masked_whiten(combined, eps=eps, center=False)


def level_rewards(rewards: Sequence[EpisodeRewards]) -> torch.Tensor:
    """``[N, 3]``: each episode's trajectory reward, mean phase reward and mean step reward.

    A mean over no phase (or no step) is 0.
    """
    rows = [
        [
            episode.trajectory,
            statistics.fmean(p.value for p in episode.phases) if episode.phases else 0.0,
            statistics.fmean(s.value for s in episode.steps) if episode.steps else 0.0,
        ]
        for episode in rewards
    ]
    return torch.tensor(rows, dtype=torch.float64).reshape(len(rows), 3)


def summed_rewards(rewards: Sequence[EpisodeRewards], config: AdvantageConfig) -> torch.Tensor:
    """Each episode's summed multi-level reward: ``alpha*traj + beta*mean(phase) + lam*mean(step)``.

    The scalar ``grpo_summed`` normalizes (see the module docstring).
    """
    return level_rewards(rewards) @ _level_weights(config)


def _level_weights(config: AdvantageConfig) -> torch.Tensor:
    return torch.tensor([config.alpha, config.beta, config.lam], dtype=torch.float64)


def multilevel_turn_advantages(
    rewards: Sequence[EpisodeRewards], groups: Sequence[Hashable], config: AdvantageConfig
) -> list[list[float]]:
    """The multi-level estimator, per episode and turn (before token whitening).

    Each turn gets ``alpha * traj + beta * phase + lam * step``: ``traj`` is the episode's
    trajectory reward standardized in its group; ``phase`` the reward of the phase segment
    holding the turn, standardized among the group's segments (of the same kind with ``kind``
    pooling), 0 for turns outside any segment (the final answer turn); ``step`` the turn's reward
    standardized among the group's turns (of the same kind with ``kind`` pooling).
    """
    if len(rewards) != len(groups):
        raise ConfigError(f"multilevel: {len(rewards)} episodes but {len(groups)} group keys")
    traj = group_normalize(
        torch.tensor([r.trajectory for r in rewards], dtype=torch.float64), groups, eps=config.eps
    )
    step_values, step_keys = [], []
    phase_values, phase_keys = [], []
    for episode, group in zip(rewards, groups, strict=True):
        for step in episode.steps:
            step_values.append(step.value)
            step_keys.append((group, step.kind if config.step_pooling == "kind" else "*"))
        for phase in episode.phases:
            phase_values.append(phase.value)
            phase_keys.append((group, phase.kind if config.phase_pooling == "kind" else "*"))
    steps = group_normalize(
        torch.tensor(step_values, dtype=torch.float64), step_keys, eps=config.eps
    )
    phases = group_normalize(
        torch.tensor(phase_values, dtype=torch.float64), phase_keys, eps=config.eps
    )
    out: list[list[float]] = []
    step_at = phase_at = 0
    for index, episode in enumerate(rewards):
        phase_of = episode.phase_of_turn()
        per_turn = []
        for turn, _ in enumerate(episode.steps):
            phase = float(phases[phase_at + phase_of[turn]]) if turn in phase_of else 0.0
            per_turn.append(
                config.alpha * float(traj[index])
                + config.beta * phase
                + config.lam * float(steps[step_at + turn])
            )
        step_at += len(episode.steps)
        phase_at += len(episode.phases)
        out.append(per_turn)
    return out


def turn_advantages(
    rewards: Sequence[EpisodeRewards], groups: Sequence[Hashable], config: AdvantageConfig
) -> list[list[float]]:
    """Advantages per episode and turn for the configured estimator.

    Episode-level estimators (``grpo``, ``dr_grpo``, ``grpo_summed``, ``gdpo``) give every turn of
    an episode the episode's advantage; ``multilevel`` gives each turn its own.
    """
    if config.estimator == "multilevel":
        return multilevel_turn_advantages(rewards, groups, config)
    values = torch.tensor([r.trajectory for r in rewards], dtype=torch.float64)
    if config.estimator == "grpo":
        episode_adv = grpo_advantages(values, groups, eps=config.eps)
    elif config.estimator == "dr_grpo":
        episode_adv = dr_grpo_advantages(values, groups)
    elif config.estimator == "grpo_summed":
        episode_adv = grpo_advantages(summed_rewards(rewards, config), groups, eps=config.eps)
    else:
        episode_adv = gdpo_advantages(
            level_rewards(rewards), groups, _level_weights(config), eps=config.eps
        )
    return [[float(episode_adv[i])] * r.n_turns for i, r in enumerate(rewards)]


def token_advantages(
    per_turn: Sequence[Sequence[float]],
    *,
    turn_index: torch.Tensor,
    row_episode: torch.Tensor,
    mask: torch.Tensor,
    whiten: bool,
    center: bool = True,
    negative_weight: float = 1.0,
    eps: float = 1e-6,
    fixed_rows: torch.Tensor | None = None,
) -> torch.Tensor:
    """Broadcast per-turn advantages to tokens; non-assistant (prompt, tool-response) tokens get 0.

    Args:
        per_turn: Advantages by episode, then turn.
        turn_index: ``[B, T]`` turn of each token (``-1`` outside assistant turns).
        row_episode: ``[B]`` episode of each row.
        mask: ``[B, T]`` true on assistant tokens.
        whiten: Whiten over the masked tokens afterwards.
        center: Subtract the masked tokens' mean when whitening (else divide by the std only).
        negative_weight: Scale of the negative advantages, applied last.
        eps: Added to the standard deviation when whitening.
        fixed_rows: ``[B]`` true on rows whose advantages are taken as given (replayed
            episodes): they are neither whitened nor part of the whitening statistics, nor scaled
            by ``negative_weight``.

    Raises:
        ConfigError: a token names a turn or episode ``per_turn`` does not have.
    """
    width = max((len(turns) for turns in per_turn), default=0)
    table = torch.zeros(len(per_turn), max(width, 1), dtype=torch.float32)
    for episode, turns in enumerate(per_turn):
        table[episode, : len(turns)] = torch.tensor(list(turns), dtype=torch.float32)
    mask = mask.bool()
    episodes = row_episode.long().unsqueeze(1).expand_as(turn_index)
    if mask.any():
        used_turns, used_episodes = turn_index[mask], episodes[mask]
        if int(used_episodes.max()) >= len(per_turn) or int(used_turns.min()) < 0:
            raise ConfigError("token_advantages: a masked token has no episode or turn")
        lengths = torch.tensor([len(turns) for turns in per_turn])
        if bool((used_turns >= lengths[used_episodes]).any()):
            raise ConfigError("token_advantages: a token names a turn beyond its episode")
    safe_turns = turn_index.clamp(min=0, max=table.shape[1] - 1)
    given = torch.where(mask, table[episodes, safe_turns], torch.zeros(()))
    fixed = (
        torch.zeros_like(mask)
        if fixed_rows is None
        else fixed_rows.bool().unsqueeze(1).expand_as(mask)
    )
    values = masked_whiten(given, mask & ~fixed, eps=eps, center=center) if whiten else given
    values = torch.where(values < 0, values * negative_weight, values)
    return torch.where(fixed, given, values)

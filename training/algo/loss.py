"""The clipped policy-gradient loss with per-token advantages, a token mask and an optional KL term.

Per token ``t`` with ratio ``r = exp(logp - old_logp)`` and advantage ``A``::

    loss_t = -min(r * A, clip(r, 1 - clip_low, 1 + clip_high) * A) + kl_coef * k3_t
    k3_t   = exp(ref_logp - logp) - (ref_logp - logp) - 1

Only tokens where ``mask`` is true count (the policy's own tokens; prompts, tool responses and
padding never do). ``aggregation`` picks the normalizer (:func:`token_weights`): ``token_mean``
(sum over all masked tokens of the batch / their number, DAPO), ``sequence_mean`` (mean per
episode, then over episodes, GRPO; an episode laid out as several rows counts once) or
``constant`` (sum / (rows * columns), Dr.GRPO).

The normalizer is a per-token weight computed over the whole batch, so a batch split into
micro-batches gets the gradient of the unsplit batch: each micro-batch's loss uses its rows of the
weights, and the losses add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from paraagent_runtime import ConfigError

__all__ = [
    "Aggregation",
    "LossStats",
    "aggregate",
    "kept_logprobs",
    "logit_positions",
    "policy_loss",
    "sequence_logprobs",
    "token_weights",
]

Aggregation = Literal["token_mean", "sequence_mean", "constant"]


@dataclass
class LossStats:
    """Diagnostics of one loss computation (plain floats, ready to log).

    Attributes:
        pg_loss: The policy-gradient part of the loss.
        kl: Mean k3 KL to the reference over masked tokens (0 without a reference).
        clip_fraction: Share of masked tokens whose ratio was clipped.
        ratio_mean: Mean ratio over masked tokens.
        n_tokens: Masked tokens.
    """

    pg_loss: float
    kl: float
    clip_fraction: float
    ratio_mean: float
    n_tokens: int


def sequence_logprobs(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """Log-prob of each token given its prefix: ``out[b, t] = log p(input_ids[b, t] | ids[b, :t])``.

    Position 0 has no prefix and gets 0.

    Args:
        logits: ``[B, T, V]`` model outputs for ``input_ids``.
        input_ids: ``[B, T]``.
    """
    logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    picked = logprobs.gather(2, input_ids[:, 1:].unsqueeze(2)).squeeze(2)
    return torch.cat([torch.zeros_like(picked[:, :1]), picked], dim=1)


def logit_positions(loss_mask: torch.Tensor) -> torch.Tensor:
    """The positions whose logits predict a token that counts in the loss.

    The logit at position ``p`` predicts the token at ``p + 1``; a position is kept when any row of
    the batch trains on the next token. Passed to a transformers model as ``logits_to_keep``, the LM
    head (``[T, V]`` per row, the largest activation of a small model) then runs only there: the
    prompt, the tool responses and the padding never reach it.

    Args:
        loss_mask: ``[B, T]`` true on trained tokens.

    Returns:
        ``[K]`` long, sorted, all ``< T - 1``.
    """
    return torch.nonzero(loss_mask[:, 1:].bool().any(0)).squeeze(1)


def kept_logprobs(
    logits: torch.Tensor, input_ids: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    """:func:`sequence_logprobs` from the logits at ``positions`` (see :func:`logit_positions`).

    Args:
        logits: ``[B, K, V]`` logits at ``positions``.
        input_ids: ``[B, T]``.
        positions: ``[K]`` positions the logits belong to.

    Returns:
        ``[B, T]``: ``log p(input_ids[b, p + 1] | prefix)`` at ``p + 1`` for each kept ``p``, 0
        elsewhere.

    Raises:
        ConfigError: ``logits`` does not hold one row per kept position.
    """
    if logits.dim() != 3 or logits.shape[:2] != (input_ids.shape[0], positions.numel()):
        raise ConfigError(
            f"kept_logprobs: logits {tuple(logits.shape)} do not match {input_ids.shape[0]} rows "
            f"x {positions.numel()} kept positions"
        )
    targets = positions.to(input_ids.device) + 1
    wide = logits.float()
    picked = wide.gather(2, input_ids[:, targets].unsqueeze(2)).squeeze(2)
    picked = picked - torch.logsumexp(wide, dim=-1)
    out = torch.zeros(input_ids.shape, dtype=picked.dtype, device=picked.device)
    return out.index_copy(1, targets.to(picked.device), picked)


def token_weights(
    mask: torch.Tensor, aggregation: Aggregation, row_episode: torch.Tensor | None = None
) -> torch.Tensor:
    """Per-token weights that make a weighted sum the loss's mean (0 off the mask).

    Args:
        mask: ``[B, T]`` true on tokens that count.
        aggregation: ``token_mean`` (every token ``1 / tokens``), ``sequence_mean`` (every token
            ``1 / (episodes * tokens of its episode)``, so each episode with a token weighs the
            same however many rows it spans) or ``constant`` (``1 / (B * T)``).
        row_episode: ``[B]`` episode of each row (default: each row its own episode).

    Raises:
        ConfigError: unknown ``aggregation``, or ``row_episode`` does not name one episode per row.
    """
    if aggregation not in ("token_mean", "sequence_mean", "constant"):
        raise ConfigError(f"unknown aggregation {aggregation!r}")
    weights = mask.to(torch.float32)
    if aggregation == "token_mean":
        return weights / weights.sum().clamp_min(1)
    if aggregation == "constant":
        return weights / max(weights.numel(), 1)
    if row_episode is None:
        row_episode = torch.arange(weights.shape[0])
    if row_episode.shape != weights.shape[:1]:
        raise ConfigError(
            f"token_weights: row_episode has shape {tuple(row_episode.shape)}, want "
            f"({weights.shape[0]},)"
        )
    _, episode = torch.unique(row_episode.to(weights.device), return_inverse=True)
    tokens = torch.zeros(int(episode.max()) + 1 if episode.numel() else 0, device=weights.device)
    tokens.index_add_(0, episode, weights.sum(1))
    n_episodes = int((tokens > 0).sum())
    per_row = 1.0 / (tokens[episode].clamp_min(1) * max(n_episodes, 1))
    return weights * per_row.unsqueeze(1)


def aggregate(
    values: torch.Tensor,
    mask: torch.Tensor,
    aggregation: Aggregation,
    row_episode: torch.Tensor | None = None,
) -> torch.Tensor:
    """Reduce per-token ``values`` over ``mask`` as the loss does (see :func:`token_weights`)."""
    weights = token_weights(mask, aggregation, row_episode).to(values.dtype)
    return (values * weights).sum()


def policy_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.2,
    ref_logprobs: torch.Tensor | None = None,
    kl_coef: float = 0.0,
    aggregation: Aggregation = "token_mean",
    weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, LossStats]:
    """The clipped surrogate loss over masked tokens (all inputs ``[B, T]``).

    Args:
        logprobs: Current policy log-probs (with grad).
        old_logprobs: Log-probs of the policy that sampled the tokens.
        advantages: Per-token advantages.
        mask: True on tokens that count.
        clip_low: Lower clip range (``1 - clip_low``).
        clip_high: Upper clip range (``1 + clip_high``; larger than ``clip_low`` is clip-higher).
        ref_logprobs: Reference-model log-probs for the KL term.
        kl_coef: Weight of the k3 KL term (needs ``ref_logprobs`` when > 0).
        aggregation: ``token_mean``, ``sequence_mean`` or ``constant``, over these rows.
        weights: Per-token weights from :func:`token_weights` over a larger batch (a
            micro-batch's rows of them); when given, ``aggregation`` is not used.

    Returns:
        The scalar loss and its :class:`LossStats`.

    Raises:
        ConfigError: shapes differ, clip ranges are negative, ``kl_coef > 0`` without a
            reference, or the aggregation is unknown.
    """
    shapes = {tuple(t.shape) for t in (logprobs, old_logprobs, advantages, mask)}
    for optional in (ref_logprobs, weights):
        if optional is not None:
            shapes.add(tuple(optional.shape))
    if len(shapes) != 1 or logprobs.dim() != 2:
        raise ConfigError(
            f"policy_loss: all inputs must share one [B, T] shape, got {sorted(shapes)}"
        )
    if clip_low < 0 or clip_high < 0:
        raise ConfigError(f"policy_loss: clip ranges must be >= 0, got {clip_low}, {clip_high}")
    if kl_coef < 0 or (kl_coef > 0 and ref_logprobs is None):
        raise ConfigError("policy_loss: kl_coef must be >= 0, and > 0 only with ref_logprobs")
    if weights is None:
        weights = token_weights(mask, aggregation)
    weights = torch.where(mask.bool(), weights.to(logprobs.dtype).detach(), 0.0)
    counted = mask.to(logprobs.dtype)
    n_tokens = int(counted.sum())
    advantages = advantages.to(logprobs.dtype).detach()
    # Masked positions may hold arbitrary old log-probs (padding); zero their log-ratio first.
    log_ratio = torch.where(mask.bool(), logprobs - old_logprobs.to(logprobs.dtype).detach(), 0.0)
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high)
    per_token = -torch.minimum(ratio * advantages, clipped * advantages)
    pg_loss = (per_token * weights).sum()
    loss = pg_loss
    kl_value = 0.0
    if ref_logprobs is not None:
        delta = torch.where(mask.bool(), ref_logprobs.to(logprobs.dtype).detach() - logprobs, 0.0)
        k3 = torch.exp(delta) - delta - 1
        kl = (k3 * weights).sum()
        kl_value = float((k3.detach() * counted).sum() / max(n_tokens, 1))
        if kl_coef > 0:
            loss = loss + kl_coef * kl
    with torch.no_grad():
        was_clipped = ((ratio < 1 - clip_low) & (advantages < 0)) | (
            (ratio > 1 + clip_high) & (advantages > 0)
        )
        stats = LossStats(
            pg_loss=float(pg_loss.detach()),
            kl=kl_value,
            clip_fraction=float((was_clipped.to(counted.dtype) * counted).sum() / max(n_tokens, 1)),
            ratio_mean=float((ratio * counted).sum() / max(n_tokens, 1)),
            n_tokens=n_tokens,
        )
    return loss, stats

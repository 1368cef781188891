"""The clipped policy-gradient loss with per-token advantages, a token mask and an optional KL term.

Per token ``t`` with ratio ``r = exp(logp - old_logp)`` and advantage ``A``::

    loss_t = -min(r * A, clip(r, 1 - clip_low, 1 + clip_high) * A) + kl_coef * k3_t
    k3_t   = exp(ref_logp - logp) - (ref_logp - logp) - 1

Only tokens where ``mask`` is true count (the policy's own tokens; prompts, tool responses and
padding never do). ``aggregation`` picks the normalizer: ``token_mean`` (sum over all masked tokens
of the batch / their number, DAPO), ``sequence_mean`` (mean per row, then over rows, GRPO) or
``constant`` (sum / (rows * columns), Dr.GRPO).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from paraagent_runtime.errors import ConfigError

__all__ = [
    "Aggregation",
    "LossStats",
    "aggregate",
    "kept_logprobs",
    "logit_positions",
    "policy_loss",
    "sequence_logprobs",
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


def aggregate(values: torch.Tensor, mask: torch.Tensor, aggregation: Aggregation) -> torch.Tensor:
    """Reduce per-token ``values`` over ``mask`` as the loss does (see the module docstring)."""
    masked = values * mask
    if aggregation == "token_mean":
        return masked.sum() / mask.sum().clamp_min(1)
    if aggregation == "sequence_mean":
        return (masked.sum(1) / mask.sum(1).clamp_min(1)).mean()
    return masked.sum() / mask.numel()


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
        aggregation: ``token_mean``, ``sequence_mean`` or ``constant``.

    Returns:
        The scalar loss and its :class:`LossStats`.

    Raises:
        ConfigError: shapes differ, clip ranges are negative, or ``kl_coef > 0`` without a
            reference.
    """
    shapes = {tuple(t.shape) for t in (logprobs, old_logprobs, advantages, mask)}
    if ref_logprobs is not None:
        shapes.add(tuple(ref_logprobs.shape))
    if len(shapes) != 1 or logprobs.dim() != 2:
        raise ConfigError(
            f"policy_loss: all inputs must share one [B, T] shape, got {sorted(shapes)}"
        )
    if clip_low < 0 or clip_high < 0:
        raise ConfigError(f"policy_loss: clip ranges must be >= 0, got {clip_low}, {clip_high}")
    if kl_coef < 0 or (kl_coef > 0 and ref_logprobs is None):
        raise ConfigError("policy_loss: kl_coef must be >= 0, and > 0 only with ref_logprobs")
    if aggregation not in ("token_mean", "sequence_mean", "constant"):
        raise ConfigError(f"policy_loss: unknown aggregation {aggregation!r}")
    weights = mask.to(logprobs.dtype)
    advantages = advantages.to(logprobs.dtype).detach()
    # Masked positions may hold arbitrary old log-probs (padding); zero their log-ratio first.
    log_ratio = torch.where(mask.bool(), logprobs - old_logprobs.to(logprobs.dtype).detach(), 0.0)
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high)
    per_token = -torch.minimum(ratio * advantages, clipped * advantages)
    pg_loss = aggregate(per_token, weights, aggregation)
    loss = pg_loss
    kl_value = 0.0
    if ref_logprobs is not None:
        delta = torch.where(mask.bool(), ref_logprobs.to(logprobs.dtype).detach() - logprobs, 0.0)
        k3 = torch.exp(delta) - delta - 1
        kl = aggregate(k3, weights, aggregation)
        kl_value = float(aggregate(k3.detach(), weights, "token_mean"))
        if kl_coef > 0:
            loss = loss + kl_coef * kl
    n_tokens = int(weights.sum())
    with torch.no_grad():
        was_clipped = ((ratio < 1 - clip_low) & (advantages < 0)) | (
            (ratio > 1 + clip_high) & (advantages > 0)
        )
        stats = LossStats(
            pg_loss=float(pg_loss.detach()),
            kl=kl_value,
            clip_fraction=float((was_clipped.to(weights.dtype) * weights).sum() / max(n_tokens, 1)),
            ratio_mean=float((ratio * weights).sum() / max(n_tokens, 1)),
            n_tokens=n_tokens,
        )
    return loss, stats

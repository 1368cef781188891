"""How much of a step's gradient is signal: the spread of its rollout groups' gradients.

A step's gradient is the sum of its groups' contributions ``g_1 … g_G`` (one group: one task's
rollouts). ``G · g_i`` is an unbiased estimate of the step's gradient from group ``i`` alone, so
their spread estimates the noise of one group, and the noise of the step's gradient is that spread
over ``G`` (McCandlish et al., 2018, "An Empirical Model of Large-Batch Training"). Two numbers:

- ``snr``: ``|true gradient|² / noise`` of the step's gradient, with the squared norm of the true
  gradient estimated without bias (``|g|² − noise``; it can come out negative when noise swamps
  it). Below 1, most of the update is noise; the ratio grows linearly with the number of groups.
- ``cosine``: the mean cosine between pairs of non-zero group gradients (0: the tasks pull in
  unrelated directions). A group whose advantages are all zero (no spread in reward, positive-only
  updates) adds a zero gradient: it counts as a sample of the noise, not as a direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

__all__ = ["GradientNoise", "gradient_noise"]


@dataclass(frozen=True)
class GradientNoise:
    """Signal and noise of a step's gradient, from its groups' gradients (see the module)."""

    snr: float
    cosine: float | None


def gradient_noise(group_gradients: Sequence[torch.Tensor]) -> GradientNoise | None:
    """Estimate the signal-to-noise ratio of the sum of ``group_gradients`` (flat vectors).

    Returns ``None`` for fewer than two groups, or when the groups' gradients are all equal (no
    noise to compare with); ``cosine`` is ``None`` with fewer than two non-zero gradients.
    """
    if len(group_gradients) < 2:
        return None
    grads = torch.stack([g.detach().double().flatten() for g in group_gradients])
    count = grads.shape[0]
    total = grads.sum(dim=0)
    per_group = grads * count  # each group's estimate of the whole step's gradient
    spread = float(((per_group - total) ** 2).sum()) / (count - 1)
    noise = spread / count  # the variance of the step's gradient (the mean of the estimates)
    if noise == 0.0:
        return None
    norms = grads.norm(dim=1)
    moving = grads[norms > 0] / norms[norms > 0, None]
    cosine = None
    if moving.shape[0] >= 2:
        cosines = moving @ moving.T
        pairs = moving.shape[0] * (moving.shape[0] - 1)
        cosine = float((cosines.sum() - cosines.diagonal().sum()) / pairs)
    signal = float(total @ total) - noise
    return GradientNoise(snr=signal / noise, cosine=cosine)

"""The RL algorithm in pure torch: rewards per level, advantage estimators, token tensors, the loss.

No trainer framework is imported here, so the same functions run in CPU tests and GPU jobs.
"""

from __future__ import annotations

from .advantages import (
    ESTIMATORS,
    AdvantageConfig,
    Estimator,
    dr_grpo_advantages,
    gdpo_advantages,
    group_normalize,
    grpo_advantages,
    level_rewards,
    masked_whiten,
    multilevel_turn_advantages,
    summed_rewards,
    token_advantages,
    turn_advantages,
    zero_variance_share,
)
from .gradient_noise import GradientNoise, gradient_noise
from .loss import (
    Aggregation,
    LossStats,
    aggregate,
    kept_logprobs,
    logit_positions,
    policy_loss,
    sequence_logprobs,
    token_weights,
)
from .rewards import (
    EpisodeRewards,
    PhaseReward,
    RewardConfig,
    StepKind,
    StepReward,
    args_match,
    score_episode,
)
from .tokens import TokenBatch, TokenRow, collate, episode_rows

__all__ = [
    "ESTIMATORS",
    "AdvantageConfig",
    "Aggregation",
    "EpisodeRewards",
    "Estimator",
    "GradientNoise",
    "LossStats",
    "PhaseReward",
    "RewardConfig",
    "StepKind",
    "StepReward",
    "TokenBatch",
    "TokenRow",
    "aggregate",
    "args_match",
    "collate",
    "dr_grpo_advantages",
    "episode_rows",
    "gdpo_advantages",
    "group_normalize",
    "gradient_noise",
    "grpo_advantages",
    "kept_logprobs",
    "level_rewards",
    "logit_positions",
    "masked_whiten",
    "multilevel_turn_advantages",
    "policy_loss",
    "score_episode",
    "sequence_logprobs",
    "summed_rewards",
    "token_advantages",
    "token_weights",
    "turn_advantages",
    "zero_variance_share",
]

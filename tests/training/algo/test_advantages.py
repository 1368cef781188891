from __future__ import annotations

import random

import pytest
import torch

from paraagent_runtime.errors import ConfigError
from training.algo import (
    AdvantageConfig,
    EpisodeRewards,
    PhaseReward,
    StepReward,
    collate,
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
from training.algo.tokens import TokenBatch, TokenRow

SQRT_3_2 = (3 / 2) ** 0.5


def episode(
    steps: list[tuple[str, float]], phases: list[tuple[str, list[int], float]], traj: float
) -> EpisodeRewards:
    return EpisodeRewards(
        steps=[StepReward(turn=i, kind=kind, value=v) for i, (kind, v) in enumerate(steps)],
        phases=[PhaseReward(kind=kind, turns=turns, value=v) for kind, turns, v in phases],
        trajectory=traj,
        trajectory_components={"correct": traj, "format": 1.0, "efficiency": 0.0},
        success=traj > 0,
        n_turns=len(steps),
    )


def test_grpo_and_dr_grpo_by_hand_with_a_zero_variance_group() -> None:
    rewards = torch.tensor([1.0, 2.0, 3.0, 5.0, 5.0])
    groups = ["a", "a", "a", "b", "b"]
    assert grpo_advantages(rewards, groups).tolist() == pytest.approx(
        [-SQRT_3_2, 0, SQRT_3_2, 0, 0], abs=1e-5
    )
    assert dr_grpo_advantages(rewards, groups).tolist() == [-1.0, 0.0, 1.0, 0.0, 0.0]
    assert zero_variance_share(rewards, groups) == 0.5
    # Floats that do not average back exactly still give exact zeros in a constant group.
    assert group_normalize(torch.tensor([0.1, 0.1, 0.1]), [0, 0, 0]).tolist() == [0.0, 0.0, 0.0]


def test_gdpo_normalizes_each_reward_then_whitens() -> None:
    rewards = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 1.0]])
    advantages = gdpo_advantages(rewards, ["g", "g", "h", "h"], [1.0, 2.0])
    # g: col0 -> [1, -1], col1 -> [-1, 1], sum [-1, 1];
    # h: col0 -> [1, -1], col1 constant -> [1, -1].
    assert advantages.tolist() == pytest.approx([-1.0, 1.0, 1.0, -1.0], abs=1e-4)
    with pytest.raises(ConfigError, match="K weights"):
        gdpo_advantages(rewards, ["g"] * 4, [1.0])


def _same_signal_batch() -> tuple[list[EpisodeRewards], list[str]]:
    """Group t: levels (traj, mean phase, mean step) = (1, 1, 1), (0, 0, 0), (0, 1, 1); group z:
    two identical episodes (no signal)."""

    def levels(traj: float, process: float) -> EpisodeRewards:
        return episode(
            [("explore", process), ("final", process)], [("explore", [0], process)], traj
        )

    same = levels(1.0, 0.5)
    return [levels(1.0, 1.0), levels(0.0, 0.0), levels(0.0, 1.0), same, same], list("tttzz")


def test_the_decoupling_arms_by_hand_see_the_same_rewards() -> None:
    rewards, groups = _same_signal_batch()
    config = AdvantageConfig(alpha=1.0, beta=0.5, lam=0.5)
    assert level_rewards(rewards)[:3].tolist() == [[1, 1, 1], [0, 0, 0], [0, 1, 1]]
    # Summed: 1 + 0.5 + 0.5 = 2, 0, 1 -> GRPO of [2, 0, 1]: ±sqrt(3/2) and 0.
    assert summed_rewards(rewards, config)[:3].tolist() == [2.0, 0.0, 1.0]
    expected = {
        # Trajectory only: [1, 0, 0] -> sqrt(2), -1/sqrt(2), -1/sqrt(2).
        "grpo": [2**0.5, -(0.5**0.5), -(0.5**0.5), 0.0, 0.0],
        "grpo_summed": [SQRT_3_2, -SQRT_3_2, 0.0, 0.0, 0.0],
        # Per level: traj [√2, -1/√2, -1/√2] + 0.5 * 2 * [1/√2, -√2, 1/√2] = [3/√2, -3/√2, 0];
        # batch std over five episodes sqrt(9/5) -> ±sqrt(5/2), the no-signal group stays 0.
        "gdpo": [2.5**0.5, -(2.5**0.5), 0.0, 0.0, 0.0],
    }
    for name, values in expected.items():
        per_turn = turn_advantages(rewards, groups, AdvantageConfig(estimator=name))
        assert [turns[0] for turns in per_turn] == pytest.approx(values, abs=1e-5), name
        assert all(len(set(turns)) == 1 for turns in per_turn), name
        assert per_turn[3] == per_turn[4] == [0.0, 0.0], name
    multilevel = turn_advantages(rewards, groups, config)
    # Turn 0 holds all three levels: 3/√2, -3/√2, 0, as GDPO's sum before whitening; the final
    # turn has no phase: traj + 0.5 * step.
    assert [turns[0] for turns in multilevel[:3]] == pytest.approx(
        [3 * 0.5**0.5, -3 * 0.5**0.5, 0.0], abs=1e-5
    )
    assert multilevel[0][1] == pytest.approx(2**0.5 + 0.5 * 0.5**0.5, abs=1e-5)
    assert multilevel[3] == multilevel[4] == [0.0, 0.0]


@pytest.mark.parametrize("estimator", ["grpo", "dr_grpo", "grpo_summed", "gdpo", "multilevel"])
def test_a_batch_without_signal_gives_zeros_not_nan(estimator: str) -> None:
    same = episode([("explore", 0.3), ("final", 0.2)], [("explore", [0], 0.4)], 1.0)
    empty = episode([], [], 1.0)
    per_turn = turn_advantages(
        [same, same, empty, empty], ["a", "a", "b", "b"], AdvantageConfig(estimator=estimator)
    )
    assert per_turn == [[0.0, 0.0], [0.0, 0.0], [], []]


def test_multilevel_by_hand_with_unequal_turn_counts() -> None:
    a = episode(
        [("explore", 1.0), ("execute", 2.0), ("final", 0.2)],
        [("explore", [0], 1.0), ("execute", [1], 1.0)],
        1.0,
    )
    b = episode([("explore", 0.0), ("final", 0.2)], [("explore", [0], 0.0)], 0.0)
    config = AdvantageConfig(alpha=1.0, beta=0.5, lam=0.5)
    per_turn = multilevel_turn_advantages([a, b], ["t", "t"], config)
    # traj [1, -1]; explore steps [1, -1]; lone execute step and equal final steps 0;
    # explore phases [1, -1].
    assert per_turn[0] == pytest.approx([2.0, 1.0, 1.0], abs=1e-4)
    assert per_turn[1] == pytest.approx([-2.0, -1.0], abs=1e-4)
    pooled = multilevel_turn_advantages(
        [a, b], ["t", "t"], AdvantageConfig(step_pooling="all", phase_pooling="all")
    )
    assert pooled[0] != pytest.approx(per_turn[0])


def test_trajectory_estimators_broadcast_one_value_per_episode() -> None:
    a = episode([("explore", 1.0), ("final", 0.0)], [], 1.0)
    b = episode([("final", 0.0)], [], 0.0)
    for name in ("grpo", "dr_grpo", "grpo_summed", "gdpo"):
        per_turn = turn_advantages([a, b], [0, 0], AdvantageConfig(estimator=name))
        assert len(per_turn[0]) == 2 and len(per_turn[1]) == 1
        assert per_turn[0][0] == per_turn[0][1] > 0 > per_turn[1][0]


def test_random_groups_with_unequal_turns_stay_finite() -> None:
    rng = random.Random(0)
    rewards, groups = [], []
    for index in range(24):
        n = rng.randint(0, 6)
        kinds = [rng.choice(["explore", "execute", "final"]) for _ in range(n)]
        steps = [(kind, rng.choice([0.0, 0.5, 1.0])) for kind in kinds]
        phases = [(k, [i], rng.random()) for i, k in enumerate(kinds) if k != "final"]
        rewards.append(episode(steps, phases, rng.choice([0.0, 1.0])))
        groups.append(index // 4)
    per_turn = multilevel_turn_advantages(rewards, groups, AdvantageConfig())
    rows = [
        [
            TokenRow(
                input_ids=[1] * (1 + len(t)),
                assistant_mask=[False] + [True] * len(t),
                turn_index=[-1] + list(range(len(t))),
                old_logprobs=[0.0] * (1 + len(t)),
            )
        ]
        for t in per_turn
    ]
    batch = collate(rows, pad_token_id=0)
    tokens = token_advantages(
        per_turn,
        turn_index=batch.turn_index,
        row_episode=batch.row_episode,
        mask=batch.assistant_mask,
        whiten=True,
    )
    assert torch.isfinite(tokens).all()
    assert float(tokens[~batch.assistant_mask].abs().sum()) == 0.0
    assert float(tokens[batch.assistant_mask].mean()) == pytest.approx(0.0, abs=1e-5)


def _two_turn_batch() -> TokenBatch:
    """One row: 2 context ids, turn 0 (2 ids), 1 context id, turn 1 (1 id)."""
    row = TokenRow()
    row.extend([5, 6])
    row.extend([7, 8], turn=0, logprobs=[-1.0, -1.0])
    row.extend([9])
    row.extend([10], turn=1, logprobs=[-1.0])
    return collate([[row]], pad_token_id=0)


def _broadcast(batch: TokenBatch, per_turn: list[list[float]], **options: float) -> torch.Tensor:
    return token_advantages(
        per_turn,
        turn_index=batch.turn_index,
        row_episode=batch.row_episode,
        mask=batch.assistant_mask,
        whiten=False,
        **options,
    )


def test_token_advantages_broadcast_turns_and_mask_context() -> None:
    batch = _two_turn_batch()
    assert _broadcast(batch, [[0.5, -2.0]]).tolist() == [[0.0, 0.0, 0.5, 0.5, 0.0, -2.0]]
    with pytest.raises(ConfigError, match="beyond"):
        _broadcast(batch, [[0.5]])


@pytest.mark.parametrize(("weight", "negative"), [(1.0, -2.0), (0.25, -0.5), (0.0, 0.0)])
def test_negative_weight_scales_only_negative_advantages(weight: float, negative: float) -> None:
    values = _broadcast(_two_turn_batch(), [[0.5, -2.0]], negative_weight=weight)
    assert values.tolist() == [[0.0, 0.0, 0.5, 0.5, 0.0, negative]]


def test_fixed_rows_keep_their_advantage_and_stay_out_of_the_whitening() -> None:
    def row(sampled: list[int]) -> list[TokenRow]:
        token_row = TokenRow()
        token_row.extend([1])
        token_row.extend(sampled, turn=0, logprobs=[0.0] * len(sampled))
        return [token_row]

    rollouts = [row([2, 3]), row([4])]
    alone = collate(rollouts, pad_token_id=0)
    whitened = dict(whiten=True, center=False, negative_weight=0.5)
    expected = token_advantages(
        [[1.0], [-2.0]],
        turn_index=alone.turn_index,
        row_episode=alone.row_episode,
        mask=alone.assistant_mask,
        **whitened,
    )
    # A replayed episode (the third) with a fixed advantage of 3: a whitened row would differ.
    batch = collate([*rollouts, row([5, 6, 7])], pad_token_id=0)
    values = token_advantages(
        [[1.0], [-2.0], [3.0]],
        turn_index=batch.turn_index,
        row_episode=batch.row_episode,
        mask=batch.assistant_mask,
        fixed_rows=batch.row_episode >= 2,
        **whitened,
    )
    assert torch.equal(values[:2, : expected.shape[1]], expected)
    assert values[2].tolist() == [0.0, 3.0, 3.0, 3.0]
    assert expected[1, 1] < 0  # the rollouts' negative advantage is still scaled


def test_negative_weight_must_be_a_non_negative_number() -> None:
    with pytest.raises(ConfigError, match="negative_weight"):
        AdvantageConfig(negative_weight=-1.0)


def test_scale_only_whitening_keeps_zeros_and_unit_spread() -> None:
    # A no-signal group (zeros) next to a group of longer episodes with negative advantages.
    values = torch.tensor([[0.0, 0.0, -1.0, -1.0, -1.0, 2.0, 9.0]])
    mask = torch.tensor([[True, True, True, True, True, True, False]])
    centred = masked_whiten(values, mask)
    scaled = masked_whiten(values, mask, center=False)
    selected = values[mask]
    std = float((selected - selected.mean()).pow(2).mean().sqrt())
    assert centred[0, 0] != 0.0 and scaled[0, :2].tolist() == [0.0, 0.0]
    assert scaled[0, 2] == pytest.approx(-1.0 / std, rel=1e-5) and scaled[0, 6] == 0.0
    assert float(scaled[mask].std(unbiased=False)) == pytest.approx(1.0, rel=1e-4)


def test_masked_whiten_of_constant_values_is_zero() -> None:
    values = torch.tensor([[3.0, 3.0, 7.0]])
    mask = torch.tensor([[True, True, False]])
    assert masked_whiten(values, mask).tolist() == [[0.0, 0.0, 0.0]]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"estimator": "ppo"}, "estimator"),
        ({"alpha": -1.0}, "alpha"),
        ({"step_pooling": "turn"}, "step_pooling"),
        ({"alpha": 0.0, "beta": 0.0, "lam": 0.0}, "all 0"),
        ({"eps": 0.0}, "eps"),
    ],
)
def test_advantage_config_rejects_bad_values(bad: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        AdvantageConfig(**bad)


def test_group_normalize_rejects_mismatched_keys() -> None:
    with pytest.raises(ConfigError, match="one key per value"):
        group_normalize(torch.zeros(3), [0, 0])

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from paraagent_runtime.errors import ConfigError
from training.algo import (
    aggregate,
    kept_logprobs,
    logit_positions,
    policy_loss,
    sequence_logprobs,
    token_weights,
)

ADV = torch.tensor([[1.0, 2.0, 0.0], [-1.0, 0.0, 0.0]])
MASK = torch.tensor([[True, True, False], [True, False, False]])


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [("token_mean", -2 / 3), ("sequence_mean", (-1.5 + 1.0) / 2), ("constant", -2 / 6)],
)
def test_on_policy_loss_is_minus_the_mean_advantage(aggregation: str, expected: float) -> None:
    logprobs = torch.full((2, 3), -1.0)
    loss, stats = policy_loss(logprobs, logprobs.clone(), ADV, MASK, aggregation=aggregation)
    assert float(loss.detach()) == pytest.approx(expected)
    assert (
        stats.n_tokens == 3
        and stats.ratio_mean == pytest.approx(1.0)
        and stats.clip_fraction == 0.0
    )


def test_clipping_caps_the_ratio_and_stops_its_gradient() -> None:
    old = torch.zeros(1, 2)
    logprobs = torch.tensor([[math.log(1.5), math.log(1.1)]], requires_grad=True)
    advantages = torch.ones(1, 2)
    loss, stats = policy_loss(logprobs, old, advantages, torch.ones(1, 2, dtype=torch.bool))
    assert float(loss.detach()) == pytest.approx(-(1.2 + 1.1) / 2)
    assert stats.clip_fraction == 0.5
    loss.backward()
    assert logprobs.grad[0, 0] == 0.0 and logprobs.grad[0, 1] == pytest.approx(-1.1 / 2)


def test_k3_kl_to_the_reference() -> None:
    logprobs = torch.zeros(1, 2)
    ref = torch.tensor([[math.log(2.0), 0.0]])
    mask = torch.tensor([[True, True]])
    loss, stats = policy_loss(
        logprobs, logprobs, torch.zeros(1, 2), mask, ref_logprobs=ref, kl_coef=0.5
    )
    k3 = 2.0 - math.log(2.0) - 1.0
    assert stats.kl == pytest.approx(k3 / 2)
    assert float(loss.detach()) == pytest.approx(0.5 * k3 / 2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"advantages": torch.zeros(2, 2)}, "shape"),
        ({"kl_coef": 0.1}, "ref_logprobs"),
        ({"clip_low": -0.1}, "clip"),
        ({"aggregation": "sum"}, "aggregation"),
    ],
)
def test_bad_loss_inputs_raise(kwargs: dict, match: str) -> None:
    arguments = {
        "logprobs": torch.zeros(2, 3),
        "old_logprobs": torch.zeros(2, 3),
        "advantages": ADV,
        "mask": MASK,
    }
    arguments.update(kwargs)
    with pytest.raises(ConfigError, match=match):
        policy_loss(**arguments)


def _param_grads(
    model: torch.nn.Module, advantages: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor
) -> list[torch.Tensor]:
    model.zero_grad()
    logprobs = sequence_logprobs(model(input_ids=ids).logits, ids)
    logprobs.retain_grad()
    loss, _ = policy_loss(logprobs, logprobs.detach(), advantages, mask)
    loss.backward()
    assert float(logprobs.grad[~mask].abs().sum()) == 0.0
    assert float(logprobs.grad[mask].abs().sum()) > 0.0
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def test_tool_response_tokens_get_zero_gradient(tiny_model_dir: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    ids = torch.randint(0, 1000, (2, 10), generator=torch.Generator().manual_seed(0))
    # Assistant tokens at 2-4 and 8-9; 5-7 are a tool response, 0-1 the prompt.
    mask = torch.zeros(2, 10, dtype=torch.bool)
    mask[:, 2:5] = True
    mask[:, 8:] = True
    advantages = torch.where(mask, 1.0, 0.0)
    poisoned = torch.where(mask, 1.0, 100.0)
    clean = _param_grads(model, advantages, ids, mask)
    dirty = _param_grads(model, poisoned, ids, mask)
    assert any(float(g.abs().sum()) > 0 for g in clean)
    for a, b in zip(clean, dirty, strict=True):
        torch.testing.assert_close(a, b)


def test_sequence_logprobs_align_with_next_token() -> None:
    logits = torch.zeros(1, 3, 4)
    logits[0, 0, 2] = 10.0
    ids = torch.tensor([[1, 2, 3]])
    out = sequence_logprobs(logits, ids)
    assert out[0, 0] == 0.0 and out[0, 1] > -0.01 and out[0, 2] == pytest.approx(-math.log(4))


def test_logit_positions_are_the_predecessors_of_trained_tokens() -> None:
    mask = torch.tensor([[0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 0, 1]], dtype=torch.bool)
    assert logit_positions(mask).tolist() == [1, 2, 4]
    assert logit_positions(torch.zeros(2, 4, dtype=torch.bool)).numel() == 0


def test_kept_logprobs_match_the_full_logits_on_trained_tokens(tiny_model_dir: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    ids = torch.randint(0, 1000, (2, 12), generator=torch.Generator().manual_seed(1))
    mask = torch.zeros(2, 12, dtype=torch.bool)
    mask[0, 3:6] = True
    mask[1, 9:] = True
    positions = logit_positions(mask)
    kept = model(input_ids=ids, logits_to_keep=positions).logits
    assert kept.shape[1] == positions.numel() < ids.shape[1]
    full = sequence_logprobs(model(input_ids=ids).logits, ids)
    out = kept_logprobs(kept, ids, positions)
    torch.testing.assert_close(out[mask], full[mask], rtol=1e-5, atol=1e-5)
    outside = torch.ones(12, dtype=torch.bool)
    outside[positions + 1] = False
    assert bool((out[:, outside] == 0).all())


def test_kept_logprobs_reject_mismatched_logits() -> None:
    with pytest.raises(ConfigError, match="kept positions"):
        kept_logprobs(
            torch.zeros(2, 3, 5), torch.zeros(2, 6, dtype=torch.long), torch.tensor([0, 1])
        )


def test_aggregate_weighs_tokens_as_each_mode_says() -> None:
    # A short row (+1 on 1 token) and a long row (-1 on 3 tokens), 4 columns each.
    values = torch.tensor([[1.0, 0.0, 0.0, 0.0], [-1.0, -1.0, -1.0, 0.0]])
    mask = torch.tensor([[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]])
    assert float(aggregate(values, mask, "token_mean")) == pytest.approx(-2.0 / 4)
    assert float(aggregate(values, mask, "sequence_mean")) == pytest.approx(0.0, abs=1e-6)
    assert float(aggregate(values, mask, "constant")) == pytest.approx(-2.0 / 8)


def test_sequence_mean_weighs_each_episode_once_however_many_rows_it_spans() -> None:
    # Episode 0 spans two rows (+1 on 1 token, +1 on 2 tokens); episode 1 is one row (-1 on 3).
    values = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [-1.0, -1.0, -1.0]])
    mask = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    row_episode = torch.tensor([0, 0, 1])
    assert float(aggregate(values, mask, "sequence_mean", row_episode)) == pytest.approx(
        0.0, abs=1e-6
    )
    # Per row, episode 0 would count twice.
    assert float(aggregate(values, mask, "sequence_mean")) == pytest.approx(1 / 3)
    weights = token_weights(mask, "sequence_mean", row_episode)
    assert weights[0, 0] == pytest.approx(1 / 6) and weights[2, 0] == pytest.approx(1 / 6)
    assert float(weights.sum()) == pytest.approx(1.0) and float(weights[~mask].abs().sum()) == 0


def test_an_episode_without_trained_tokens_does_not_dilute_the_mean() -> None:
    mask = torch.tensor([[1, 1], [0, 0]], dtype=torch.bool)
    weights = token_weights(mask, "sequence_mean", torch.tensor([0, 1]))
    assert weights.tolist() == [[0.5, 0.5], [0.0, 0.0]]


@pytest.mark.parametrize("aggregation", ["token_mean", "sequence_mean", "constant"])
def test_micro_batch_losses_with_batch_weights_add_up_to_the_batch_loss(
    aggregation: str,
) -> None:
    generator = torch.Generator().manual_seed(0)
    logprobs = -torch.rand(4, 5, generator=generator)
    old = logprobs + 0.1 * torch.randn(4, 5, generator=generator)
    advantages = torch.randn(4, 5, generator=generator)
    mask = torch.rand(4, 5, generator=generator) > 0.3
    row_episode = torch.tensor([0, 0, 1, 2])
    weights = token_weights(mask, aggregation, row_episode)
    whole, _ = policy_loss(logprobs, old, advantages, mask, weights=weights)
    parts = [
        policy_loss(logprobs[i], old[i], advantages[i], mask[i], weights=weights[i])[0]
        for i in ([0], [1, 2], [3])
    ]
    assert float(sum(parts)) == pytest.approx(float(whole))
    expected = aggregate(
        -torch.minimum(
            (logprobs - old).exp() * advantages,
            (logprobs - old).exp().clamp(0.8, 1.2) * advantages,
        ),
        mask,
        aggregation,
        row_episode,
    )
    assert float(whole) == pytest.approx(float(expected))


def test_token_weights_reject_bad_inputs() -> None:
    with pytest.raises(ConfigError, match="aggregation"):
        token_weights(MASK, "sum")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="row_episode"):
        token_weights(MASK, "sequence_mean", torch.tensor([0, 1, 2]))

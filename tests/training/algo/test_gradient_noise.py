from __future__ import annotations

import math

import pytest
import torch

from training.algo import gradient_noise


def test_hand_computed_signal_to_noise_and_cosine() -> None:
    # Two groups: g1 = (1, 0), g2 = (0, 1). Step gradient g = (1, 1), |g|^2 = 2.
    # Per-group estimates 2*g_i = (2, 0), (0, 2); their spread around g: 2 + 2 = 4, over
    # (G - 1) = 1 -> 4; noise of the mean = 4 / 2 = 2; signal = |g|^2 - noise = 0.
    result = gradient_noise([torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])])
    assert result is not None
    assert result.snr == pytest.approx(0.0)
    assert result.cosine == pytest.approx(0.0)


def test_agreeing_groups_have_high_snr_and_opposite_ones_negative() -> None:
    same = gradient_noise([torch.tensor([1.0, 0.0]), torch.tensor([1.1, 0.0])])
    assert same is not None and same.snr > 100 and same.cosine == pytest.approx(1.0)
    opposite = gradient_noise([torch.tensor([1.0, 0.0]), torch.tensor([-1.0, 0.0])])
    assert opposite is not None and opposite.snr < 0 and opposite.cosine == pytest.approx(-1.0)


def test_the_ratio_grows_with_the_number_of_groups() -> None:
    torch.manual_seed(0)
    mean = torch.ones(512) * 0.1
    ratios = []
    for count in (4, 64):
        draws = [mean + torch.randn(512) for _ in range(count)]
        result = gradient_noise(draws)
        assert result is not None
        ratios.append(result.snr)
    # True |mean|^2 = 5.12, per-group noise trace = 512: SNR = count * 0.01.
    assert ratios[1] == pytest.approx(0.64, abs=0.25)
    assert ratios[1] > ratios[0]


def test_zero_groups_are_noise_samples_but_not_directions() -> None:
    result = gradient_noise([torch.tensor([1.0, 0.0]), torch.zeros(2), torch.tensor([1.0, 0.0])])
    assert result is not None and result.cosine == pytest.approx(1.0)
    lone = gradient_noise([torch.tensor([1.0, 0.0]), torch.zeros(2)])
    assert lone is not None and lone.cosine is None and math.isfinite(lone.snr)


def test_degenerate_inputs_give_none() -> None:
    assert gradient_noise([torch.ones(3)]) is None
    assert gradient_noise([torch.ones(3), torch.ones(3)]) is None  # no spread: no noise

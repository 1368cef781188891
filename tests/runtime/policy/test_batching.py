"""Batched generation in TransformersPolicy.

Concurrent calls share one left-padded generate call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from paraagent_runtime.errors import ConfigError, ModelAPIError
from paraagent_runtime.policy import Completion, Message, SamplingParams, TransformersPolicy
from paraagent_runtime.policy.tiny import build_tiny_model

# Different lengths, so batched rows are left-padded by different amounts.
PROMPTS = [
    [Message(role="user", content="Find the weather.")],
    [
        Message(role="system", content="You are an agent that calls tools in parallel."),
        Message(role="user", content="Book a table for two in Paris and check the forecast."),
    ],
    [Message(role="user", content="What time is it in Tokyo, Lima and Oslo right now?")],
]
GREEDY = SamplingParams(max_tokens=12)


@pytest.fixture
def policy(varied_model_dir: Path) -> TransformersPolicy:
    # A long window makes every request of a gather land in the same batch.
    return TransformersPolicy(varied_model_dir, batch_window_s=0.5, max_batch_size=8)


async def _alone(
    policy: TransformersPolicy, prompts: list[list[Message]], sampling: SamplingParams
) -> list[Completion]:
    return [await policy.complete(prompt, sampling=sampling) for prompt in prompts]


async def test_greedy_rows_in_a_batch_match_their_solo_runs(policy: TransformersPolicy) -> None:
    alone = await _alone(policy, PROMPTS, GREEDY)
    assert policy.batch_stats.largest == 1
    batched = await asyncio.gather(*(policy.complete(p, sampling=GREEDY) for p in PROMPTS))
    assert policy.batch_stats.batches == len(PROMPTS) + 1
    assert policy.batch_stats.largest == len(PROMPTS)
    for solo, row in zip(alone, batched, strict=True):
        assert row.token_ids == solo.token_ids
        assert row.prompt_token_ids == solo.prompt_token_ids
        assert row.text == solo.text and row.finish_reason == solo.finish_reason == "length"
        assert row.logprobs == pytest.approx(solo.logprobs, abs=1e-4)
        assert len(row.logprobs) == row.completion_tokens == GREEDY.max_tokens
    assert len(set(batched[0].token_ids)) > 1


async def test_each_row_has_its_own_stop_strings_and_stream(policy: TransformersPolicy) -> None:
    full = await _alone(policy, PROMPTS[:2], GREEDY)
    stop = full[0].text[len(full[0].text) // 2 :][:2]
    assert stop
    streams: list[list[str]] = [[], []]
    cut, other = await asyncio.gather(
        policy.complete(
            PROMPTS[0],
            sampling=GREEDY.model_copy(update={"stop": [stop]}),
            on_text=streams[0].append,
        ),
        policy.complete(PROMPTS[1], sampling=GREEDY, on_text=streams[1].append),
    )
    assert policy.batch_stats.largest == 2
    assert cut.text == full[0].text[: full[0].text.index(stop)]
    assert cut.finish_reason == "stop"
    assert cut.token_ids == full[0].token_ids[: len(cut.token_ids)]
    assert len(cut.logprobs) == len(cut.token_ids) < GREEDY.max_tokens
    assert other.token_ids == full[1].token_ids and other.finish_reason == "length"
    assert "".join(streams[0]) == cut.text
    assert "".join(streams[1]) == other.text


async def test_a_row_ending_at_eos_carries_no_padding(policy: TransformersPolicy) -> None:
    first, second = await _alone(policy, PROMPTS[:2], GREEDY)
    early_eos = first.token_ids[2]
    assert early_eos not in first.token_ids[:2] and early_eos not in second.token_ids
    eos = policy.tokenizer.eos_token_id
    policy.model.generation_config.eos_token_id = [eos, early_eos]
    ended, running = await asyncio.gather(
        *(policy.complete(prompt, sampling=GREEDY) for prompt in PROMPTS[:2])
    )
    assert policy.batch_stats.largest == 2
    assert ended.token_ids == first.token_ids[:3]
    assert ended.finish_reason == "stop" and len(ended.logprobs) == 3
    assert ended.logprobs == pytest.approx(first.logprobs[:3], abs=1e-4)
    assert running.token_ids == second.token_ids and running.finish_reason == "length"


async def test_cancelling_one_request_leaves_the_others_alone(policy: TransformersPolicy) -> None:
    sampling = SamplingParams(max_tokens=60)
    alone = await _alone(policy, PROMPTS[1:], sampling)
    cancelled: asyncio.Task[Completion] | None = None

    def cancel_on_first_text(_: str) -> None:
        assert cancelled is not None
        cancelled.cancel()

    cancelled = asyncio.ensure_future(
        policy.complete(PROMPTS[0], sampling=sampling, on_text=cancel_on_first_text)
    )
    others = [asyncio.ensure_future(policy.complete(p, sampling=sampling)) for p in PROMPTS[1:]]
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    results = await asyncio.gather(*others)
    assert policy.batch_stats.largest == len(PROMPTS)
    assert [result.token_ids for result in results] == [solo.token_ids for solo in alone]


async def test_an_over_long_prompt_fails_only_its_own_request(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    short_dir = build_tiny_model(
        tmp_path / "short", tokenizer_from=tiny_model_dir, max_positions=48
    )
    policy = TransformersPolicy(short_dir, batch_window_s=0.5)
    too_long = PROMPTS[1] * 3
    sampling = SamplingParams(max_tokens=40)
    failed, first, third = await asyncio.gather(
        policy.complete(too_long, sampling=sampling),
        policy.complete(PROMPTS[0], sampling=sampling),
        policy.complete(PROMPTS[2], sampling=sampling),
        return_exceptions=True,
    )
    assert isinstance(failed, ModelAPIError) and "accepts at most 48" in str(failed)
    assert policy.batch_stats.batches == 1 and policy.batch_stats.largest == 2
    # Each row stops at the model's limit, which its own prompt length sets.
    for row in (first, third):
        assert isinstance(row, Completion)
        assert len(row.prompt_token_ids) + len(row.token_ids) == 48
        assert row.finish_reason == "length"


async def test_only_compatible_sampling_shares_a_batch(policy: TransformersPolicy) -> None:
    seeded = SamplingParams(max_tokens=4, temperature=1.0, seed=5)
    requests = [
        (PROMPTS[0], SamplingParams(max_tokens=3)),
        (PROMPTS[1], SamplingParams(max_tokens=3)),
        (PROMPTS[2], SamplingParams(max_tokens=4)),
        (PROMPTS[0], SamplingParams(max_tokens=4, temperature=0.7)),
        (PROMPTS[0], seeded),
        (PROMPTS[0], seeded),
    ]
    results = await asyncio.gather(*(policy.complete(p, sampling=s) for p, s in requests))
    # greedy/3 shares one batch; greedy/4, sampled/0.7 and each seeded request run alone.
    assert policy.batch_stats.batches == 5
    assert policy.batch_stats.requests == 6 and policy.batch_stats.largest == 2
    solo_seeded = await policy.complete(PROMPTS[0], sampling=seeded)
    assert results[4].token_ids == results[5].token_ids == solo_seeded.token_ids


async def test_batch_size_one_generates_every_request_alone(tiny_model_dir: Path) -> None:
    policy = TransformersPolicy(tiny_model_dir, max_batch_size=1)
    results = await asyncio.gather(*(policy.complete(p, sampling=GREEDY) for p in PROMPTS))
    assert policy.batch_stats.batches == len(PROMPTS) and policy.batch_stats.largest == 1
    assert all(len(result.token_ids) == GREEDY.max_tokens for result in results)


def test_bad_batch_settings_are_config_errors(tiny_model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="max_batch_size must be >= 1"):
        TransformersPolicy(tiny_model_dir, max_batch_size=0)
    with pytest.raises(ConfigError, match="batch_window_s must be >= 0"):
        TransformersPolicy(tiny_model_dir, batch_window_s=-1.0)

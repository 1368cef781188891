"""The prefix cache: later turns prefill only what they add, and generate the same tokens."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import torch

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.policy import Message, SamplingParams, TransformersPolicy
from paraagent_runtime.policy.prefix_cache import PrefixCache

GREEDY = SamplingParams(max_tokens=10)
SYSTEM = Message(
    role="system",
    content="You are an agent that explores a tool space and calls tools in parallel.",
)
TASKS = [
    "Find the weather in Paris and convert 20 C to Fahrenheit.",
    "Book a table for two in Lima tonight.",
    "What time is it in Tokyo, Oslo and Quito right now?",
]


def _policy(model_dir: Path, *, cached: bool) -> TransformersPolicy:
    return TransformersPolicy(
        model_dir, batch_window_s=0.3, max_batch_size=8, prefix_cache_mb=64 if cached else 0
    )


async def _episodes(policy: TransformersPolicy, turns: int) -> list[list[list[int]]]:
    """Run one multi-turn episode per task concurrently; return each turn's sampled token ids."""

    async def episode(task: str, index: int) -> list[list[int]]:
        messages = [SYSTEM, Message(role="user", content=task)]
        sampled = []
        for turn in range(turns):
            completion = await policy.complete(messages, sampling=GREEDY)
            sampled.append(completion.token_ids)
            # Observations of different lengths, so cached prefixes differ across rows.
            observation = f"result {turn} of call {index}: " + "ok " * (3 + 4 * index)
            messages += [
                Message(role="assistant", content=completion.text),
                Message(role="tool", content=observation),
            ]
        return sampled

    return list(await asyncio.gather(*(episode(t, i) for i, t in enumerate(TASKS))))


async def test_cached_turns_generate_what_full_prefills_generate(varied_model_dir: Path) -> None:
    cached = _policy(varied_model_dir, cached=True)
    uncached = _policy(varied_model_dir, cached=False)
    with_cache = await _episodes(cached, turns=3)
    without = await _episodes(uncached, turns=3)
    assert with_cache == without
    stats = cached.prefix_cache_stats
    assert stats is not None and uncached.prefix_cache_stats is None
    # Turns 2 and 3 of each episode hit; their prompts mostly come from the cache.
    assert stats.hits == 2 * len(TASKS)
    assert stats.reuse_ratio > 0.5
    assert cached.batch_stats.largest == len(TASKS)


async def test_a_batch_mixing_cached_and_fresh_prompts_matches_solo_runs(
    varied_model_dir: Path,
) -> None:
    policy = _policy(varied_model_dir, cached=True)
    first = [SYSTEM, Message(role="user", content=TASKS[0])]
    answer = await policy.complete(first, sampling=GREEDY)
    follow_up = [
        *first,
        Message(role="assistant", content=answer.text),
        Message(role="tool", content="22 C, light rain"),
    ]
    fresh = [Message(role="user", content=TASKS[2])]
    together = await asyncio.gather(
        policy.complete(follow_up, sampling=GREEDY), policy.complete(fresh, sampling=GREEDY)
    )
    assert policy.prefix_cache_stats is not None and policy.prefix_cache_stats.hits == 1
    solo = _policy(varied_model_dir, cached=False)
    alone = [await solo.complete(prompt, sampling=GREEDY) for prompt in (follow_up, fresh)]
    assert [c.token_ids for c in together] == [c.token_ids for c in alone]
    assert together[0].prompt_token_ids == alone[0].prompt_token_ids


async def test_clearing_after_a_weight_change_regenerates_from_the_new_weights(
    varied_model_dir: Path,
) -> None:
    policy = _policy(varied_model_dir, cached=True)
    first = [SYSTEM, Message(role="user", content=TASKS[1])]
    answer = await policy.complete(first, sampling=GREEDY)
    follow_up = [*first, Message(role="assistant", content=answer.text)]
    follow_up.append(Message(role="tool", content="table booked"))
    with torch.no_grad():
        for weight in policy.model.parameters():
            weight.mul_(0.9)
    policy.clear_prefix_cache()
    after_clear = await policy.complete(follow_up, sampling=GREEDY)
    fresh = _policy(varied_model_dir, cached=False)
    await asyncio.to_thread(fresh.load)
    with torch.no_grad():
        for weight in fresh.model.parameters():
            weight.mul_(0.9)
    assert after_clear.token_ids == (await fresh.complete(follow_up, sampling=GREEDY)).token_ids
    stats = policy.prefix_cache_stats
    assert stats is not None and stats.hits == 0


def _key_values(tokens: int, layers: int = 2) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(torch.zeros(1, tokens, 4), torch.zeros(1, tokens, 4)) for _ in range(layers)]


def test_the_longest_common_prefix_wins_and_leaves_a_token_to_prefill() -> None:
    cache = PrefixCache(10**6, min_match=2)
    cache.add([1, 2, 3, 4], _key_values(4), generation=0)
    cache.add([1, 2, 9, 9, 9], _key_values(5), generation=0)
    assert cache.match([1, 2, 3, 4, 5]).length == 4
    assert cache.match([1, 2, 9, 7]).length == 3
    # The whole prompt is cached: one token is still fed forward to get the next logits.
    assert cache.match([1, 2, 3, 4]).length == 3
    assert cache.match([1, 5]).entry is None  # shorter than min_match
    assert cache.match([7, 7, 7]).entry is None


def test_an_extension_replaces_its_prefix_and_the_budget_evicts_least_recent() -> None:
    per_token = _key_values(1)
    token_bytes = sum(k.nbytes + v.nbytes for k, v in per_token)
    cache = PrefixCache(10 * token_bytes, min_match=2)
    cache.add([1, 2, 3], _key_values(3), generation=0)
    cache.add([1, 2, 3, 4, 5], _key_values(5), generation=0)
    assert len(cache) == 1 and cache.nbytes == 5 * token_bytes
    cache.add([6, 7, 8, 9], _key_values(4), generation=0)
    cache.match([1, 2, 3, 4, 5, 6])  # touches the first entry
    cache.add([3, 3, 3], _key_values(3), generation=0)
    assert len(cache) == 2 and cache.stats.evicted == 1
    assert cache.match([6, 7, 8, 9, 1]).entry is None
    cache.add(list(range(20)), _key_values(20), generation=0)  # over the whole budget: skipped
    assert cache.nbytes <= 10 * token_bytes


def test_a_batch_started_before_a_clear_does_not_repopulate_the_cache() -> None:
    cache = PrefixCache(10**6, min_match=1)
    started = cache.generation
    cache.clear()
    cache.add([1, 2, 3], _key_values(3), generation=started)
    assert len(cache) == 0
    cache.add([1, 2, 3], _key_values(3), generation=cache.generation)
    assert len(cache) == 1


def test_a_negative_budget_is_a_config_error(varied_model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="prefix_cache_mb"):
        TransformersPolicy(varied_model_dir, prefix_cache_mb=-1)
    with pytest.raises(ConfigError):
        PrefixCache(-1)

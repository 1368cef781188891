"""OnnxGenAIPolicy: the same turns as TransformersPolicy, faster; the engine choice of the specs.

The engine tests export a tiny random-init model once per session (the builder runs in a child
process: ~10 s); the slow test compares the shipped adapter on the real SmolLM2-135M.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from paraagent_runtime.errors import ConfigError, ModelAPIError, UserError
from paraagent_runtime.policy import (
    Message,
    OnnxGenAIPolicy,
    SamplingParams,
    TransformersPolicy,
    ort_export,
    policy_from_spec,
)

from .local_contract import CONVERSATION, check_stop_string_and_streaming

needs_engine = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime_genai") is None
    or importlib.util.find_spec("onnx_ir") is None,
    reason="onnxruntime-genai is not installed",
)


@pytest.fixture
def policy(varied_model_dir: Path, varied_export: Path, export_cache: Path) -> OnnxGenAIPolicy:
    return OnnxGenAIPolicy(varied_model_dir, model_name="tiny", cache_dir=export_cache)


@needs_engine
async def test_greedy_turns_and_logprobs_equal_transformers(
    policy: OnnxGenAIPolicy, varied_model_dir: Path
) -> None:
    reference = TransformersPolicy(varied_model_dir, prefix_cache_mb=0)
    sampling = SamplingParams(max_tokens=12)
    for messages in (CONVERSATION[:2], CONVERSATION):
        fast = await policy.complete(messages, sampling=sampling)
        slow = await reference.complete(messages, sampling=sampling)
        assert fast.prompt_token_ids == slow.prompt_token_ids
        assert fast.token_ids == slow.token_ids and fast.text == slow.text
        assert fast.logprobs == pytest.approx(slow.logprobs, abs=1e-3)
        assert fast.finish_reason == slow.finish_reason and fast.model == "tiny"


@needs_engine
async def test_later_turns_reuse_the_prefix_and_get_the_same_tokens(
    policy: OnnxGenAIPolicy, varied_model_dir: Path, export_cache: Path
) -> None:
    sampling = SamplingParams(max_tokens=6)
    first = await policy.complete(CONVERSATION[:2], sampling=sampling)
    turn = [*CONVERSATION[:2], Message(role="assistant", content=first.text), CONVERSATION[3]]
    reused = await policy.complete(turn, sampling=sampling)
    stats = policy.prefix_cache_stats
    assert stats.hits == 1 and stats.reused_tokens >= len(first.prompt_token_ids)
    fresh = OnnxGenAIPolicy(varied_model_dir, cache_dir=export_cache)
    assert (await fresh.complete(turn, sampling=sampling)).token_ids == reused.token_ids
    assert fresh.prefix_cache_stats.reused_tokens == 0


@needs_engine
async def test_speculative_drafts_keep_the_greedy_tokens_and_logprobs(
    policy: OnnxGenAIPolicy, varied_model_dir: Path, export_cache: Path
) -> None:
    plain = OnnxGenAIPolicy(varied_model_dir, draft_tokens=0, cache_dir=export_cache)
    sampling = SamplingParams(max_tokens=16)
    for messages in (CONVERSATION[:2], CONVERSATION, CONVERSATION[:2]):
        drafted = await policy.complete(messages, sampling=sampling)
        reference = await plain.complete(messages, sampling=sampling)
        assert drafted.token_ids == reference.token_ids and drafted.text == reference.text
        assert drafted.logprobs == pytest.approx(reference.logprobs, abs=1e-4)
    # The repeated conversation is drafted from the policy's memory of its first answer.
    assert policy.draft_stats.accepted >= 10
    assert plain.draft_stats.drafted == 0
    sampled = SamplingParams(max_tokens=8, temperature=1.0, seed=3)
    before = policy.draft_stats.drafted
    await policy.complete(CONVERSATION[:2], sampling=sampled)
    assert policy.draft_stats.drafted == before
    with pytest.raises(ConfigError, match="draft_tokens"):
        OnnxGenAIPolicy(varied_model_dir, draft_tokens=-1)
    # Closing keeps the memory beside the export: a new policy drafts the first turn from it.
    await policy.aclose()
    again = OnnxGenAIPolicy(varied_model_dir, cache_dir=export_cache)
    await again.complete(CONVERSATION, sampling=sampling)
    assert again.draft_stats.accepted >= 10


@needs_engine
async def test_concurrent_conversations_keep_their_own_slots(
    varied_model_dir: Path, varied_export: Path, export_cache: Path
) -> None:
    policy = OnnxGenAIPolicy(varied_model_dir, slots=2, cache_dir=export_cache)
    sampling = SamplingParams(max_tokens=4)
    task = "Find the weather in Paris, Tokyo, Lima, Oslo and Cairo tomorrow, and compare " * 3
    mine = [CONVERSATION[0], Message(role="user", content=task)]
    other = [CONVERSATION[0], Message(role="user", content="Book a hotel.")]
    first = await policy.complete(mine, sampling=sampling)
    await policy.complete(other, sampling=sampling)
    turn = [*mine, Message(role="assistant", content=first.text), CONVERSATION[3]]
    before = policy.prefix_cache_stats.reused_tokens
    await policy.complete(turn, sampling=sampling)
    # The second conversation took the free slot, so the first one's turn reuses all of it.
    assert policy.prefix_cache_stats.reused_tokens - before >= len(first.prompt_token_ids)


@needs_engine
async def test_stop_string_cuts_the_text_and_streaming_adds_up(policy: OnnxGenAIPolicy) -> None:
    await check_stop_string_and_streaming(policy, max_tokens=10)


@needs_engine
async def test_cancelling_stops_generation_and_the_policy_keeps_serving(
    policy: OnnxGenAIPolicy,
) -> None:
    task: asyncio.Task | None = None

    def cancel(_: str) -> None:
        assert task is not None
        task.cancel()

    task = asyncio.create_task(
        policy.complete(CONVERSATION, sampling=SamplingParams(max_tokens=4000), on_text=cancel)
    )
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=30)
    await asyncio.wait_for(policy._scheduler.wait_idle(), timeout=30)
    after = await policy.complete(CONVERSATION, sampling=SamplingParams(max_tokens=3))
    assert len(after.token_ids) == 3


@needs_engine
async def test_limits(policy: OnnxGenAIPolicy, varied_model_dir: Path, export_cache: Path) -> None:
    capped = OnnxGenAIPolicy(varied_model_dir, max_new_tokens=2, cache_dir=export_cache)
    assert len((await capped.complete(CONVERSATION)).token_ids) == 2
    short = OnnxGenAIPolicy(varied_model_dir, max_context=8, cache_dir=export_cache)
    with pytest.raises(ModelAPIError, match="accepts at most 8"):
        await short.complete(CONVERSATION)
    results = await asyncio.gather(
        *(policy.complete(CONVERSATION, sampling=SamplingParams(max_tokens=3)) for _ in range(3))
    )
    assert len({tuple(result.token_ids) for result in results}) == 1


@needs_engine
def test_an_export_is_reused_and_keyed_by_adapter_and_precision(
    varied_model_dir: Path, varied_export: Path, export_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_build(*args: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(ort_export, "_build", no_build)
    assert ort_export.ensure_ort_model(varied_model_dir, cache_dir=export_cache) == varied_export
    with pytest.raises(AssertionError, match="exported again"):
        ort_export.ensure_ort_model(varied_model_dir, precision="int4", cache_dir=export_cache)
    with pytest.raises(ConfigError, match="precision"):
        ort_export.ensure_ort_model(varied_model_dir, precision="fp8", cache_dir=export_cache)  # type: ignore[arg-type]


def test_specs_choose_the_engine(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(policy_from_spec("transformers:paraagent"), TransformersPolicy)
    assert isinstance(policy_from_spec("onnx:paraagent"), OnnxGenAIPolicy)
    # Options only transformers takes, or another device, keep transformers.
    assert isinstance(policy_from_spec("paraagent", dtype="float32"), TransformersPolicy)
    assert isinstance(policy_from_spec("local", device="cuda"), TransformersPolicy)
    with pytest.raises(ConfigError, match="CPU only"):
        policy_from_spec("onnx:paraagent", device="cuda")
    fast = policy_from_spec(f"onnx:{tiny_model_dir}", max_new_tokens=4)
    assert isinstance(fast, OnnxGenAIPolicy) and fast.model_name == tiny_model_dir.name
    monkeypatch.setattr(ort_export, "ort_genai_available", lambda: True)
    shipped = policy_from_spec("paraagent")
    assert isinstance(shipped, OnnxGenAIPolicy) and shipped.model_name == "paraagent-135m"
    assert shipped.adapter is not None and (shipped.adapter / "adapter_config.json").is_file()
    monkeypatch.setattr(ort_export, "ort_genai_available", lambda: False)
    assert isinstance(policy_from_spec("paraagent"), TransformersPolicy)
    assert isinstance(policy_from_spec(f"local:{tiny_model_dir}"), TransformersPolicy)


def test_a_missing_engine_names_the_extra(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "onnxruntime_genai" else find_spec(name, *args),
    )
    assert not ort_export.ort_genai_available()
    with pytest.raises(UserError, match=r"onnxruntime_genai.*`local` extra"):
        ort_export.ensure_ort_model(tiny_model_dir, cache_dir=tmp_path)
    with pytest.raises(UserError, match="`local` extra"):
        OnnxGenAIPolicy(tiny_model_dir, cache_dir=tmp_path).load()


@pytest.mark.slow
@needs_engine
async def test_shipped_adapter_greedy_turns_equal_transformers() -> None:
    from mcp_servers.toolenv import builtin_tasks
    from paraagent_runtime.prompts import system_prompt

    system = Message(role="system", content=system_prompt(preloaded=[]))
    prompts = [[system, Message(role="user", content=task.query)] for task in builtin_tasks()[:3]]
    sampling = SamplingParams(max_tokens=24)
    fast, slow = policy_from_spec("onnx:paraagent"), policy_from_spec("transformers:paraagent")
    for messages in prompts:
        ours = await fast.complete(messages, sampling=sampling)
        theirs = await slow.complete(messages, sampling=sampling)
        assert ours.token_ids == theirs.token_ids
        assert ours.logprobs == pytest.approx(theirs.logprobs, abs=1e-3)

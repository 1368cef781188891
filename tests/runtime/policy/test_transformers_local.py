"""TransformersPolicy on a tiny random-init model.

Token ids, log-probs, sampling, stop strings, streaming.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path

import pytest

from paraagent_runtime.errors import ConfigError, ModelAPIError
from paraagent_runtime.policy import SamplingParams, TransformersPolicy
from paraagent_runtime.policy.tiny import build_tiny_model

from .local_contract import CONVERSATION, check_stop_string_and_streaming


@pytest.fixture
def policy(tiny_model_dir: Path) -> TransformersPolicy:
    return TransformersPolicy(tiny_model_dir, model_name="tiny")


def _visible(policy: TransformersPolicy, token_ids: list[int], finish_reason: str) -> str:
    ids = (
        token_ids[:-1]
        if finish_reason == "stop" and token_ids[-1] == policy.tokenizer.eos_token_id
        else token_ids
    )
    return policy.tokenizer.decode(ids, clean_up_tokenization_spaces=False)


async def test_token_ids_logprobs_and_text_are_consistent(policy: TransformersPolicy) -> None:
    completion = await policy.complete(
        CONVERSATION, sampling=SamplingParams(max_tokens=8, temperature=1.0, seed=1)
    )
    assert (
        len(completion.token_ids) == len(completion.logprobs) == completion.completion_tokens == 8
    )
    assert all(logprob <= 0 for logprob in completion.logprobs)
    assert _visible(policy, completion.token_ids, completion.finish_reason) == completion.text
    assert completion.prompt_token_ids == policy.encode_messages(CONVERSATION)
    assert completion.finish_reason == "length" and completion.model == "tiny"


async def test_greedy_is_deterministic_and_seeded_sampling_reproducible(
    policy: TransformersPolicy,
) -> None:
    greedy = SamplingParams(max_tokens=5)
    seeded = SamplingParams(max_tokens=5, temperature=1.0, seed=7)
    first, second = [await policy.complete(CONVERSATION, sampling=greedy) for _ in range(2)]
    assert first.token_ids == second.token_ids
    a, b = [await policy.complete(CONVERSATION, sampling=seeded) for _ in range(2)]
    other = await policy.complete(CONVERSATION, sampling=seeded.model_copy(update={"seed": 8}))
    assert a.token_ids == b.token_ids
    assert a.token_ids != other.token_ids


@pytest.fixture(scope="module")
def penalized_model_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a repetition penalty in its generation config (as some hub models)."""
    import json
    import shutil

    path = tmp_path_factory.mktemp("penalized")
    shutil.copytree(tiny_model_dir, path, dirs_exist_ok=True)
    config_path = path / "generation_config.json"
    config = json.loads(config_path.read_text()) if config_path.is_file() else {}
    config_path.write_text(json.dumps({**config, "repetition_penalty": 1.8}))
    return path


@pytest.mark.parametrize(
    ("temperature", "top_p", "penalized"),
    [(1.0, 1.0, False), (0.7, 0.9, False), (0.0, 1.0, False), (0.7, 0.9, True)],
)
async def test_logprobs_are_those_of_the_raw_distribution(
    policy: TransformersPolicy,
    penalized_model_dir: Path,
    temperature: float,
    top_p: float,
    penalized: bool,
) -> None:
    import torch

    if penalized:
        policy = TransformersPolicy(penalized_model_dir)
    sampling = SamplingParams(max_tokens=4, temperature=temperature, top_p=top_p, seed=2)
    completion = await policy.complete(CONVERSATION, sampling=sampling)
    ids = torch.tensor([completion.prompt_token_ids + completion.token_ids])
    with torch.no_grad():
        logits = policy.model(ids).logits[0, len(completion.prompt_token_ids) - 1 : -1]
    expected = (
        torch.log_softmax(logits, dim=-1)
        .gather(1, torch.tensor(completion.token_ids)[:, None])
        .squeeze(1)
    )
    assert completion.logprobs == pytest.approx(expected.tolist(), abs=1e-4)


async def test_sampling_draws_from_the_whole_vocabulary(policy: TransformersPolicy) -> None:
    """No hidden top-k: generate's global default (top_k=50) must not truncate sampling."""
    import torch

    completion = await policy.complete(
        CONVERSATION, sampling=SamplingParams(max_tokens=8, temperature=1.0, seed=3)
    )
    ids = torch.tensor([completion.prompt_token_ids + completion.token_ids])
    with torch.no_grad():
        logits = policy.model(ids).logits[0, len(completion.prompt_token_ids) - 1 : -1]
    sampled = torch.tensor(completion.token_ids)[:, None]
    ranks = (logits > logits.gather(1, sampled)).sum(dim=1)
    # The random tiny model spreads its mass over ~49k tokens: top-50 would hold almost none.
    assert int(ranks.max()) >= 50


async def test_stop_string_cuts_the_text_and_streaming_adds_up(policy: TransformersPolicy) -> None:
    await check_stop_string_and_streaming(policy, max_tokens=8)


async def test_max_new_tokens_caps_the_request(tiny_model_dir: Path) -> None:
    capped = TransformersPolicy(tiny_model_dir, max_new_tokens=2)
    completion = await capped.complete(CONVERSATION, sampling=SamplingParams(max_tokens=50))
    assert len(completion.token_ids) == 2


async def test_concurrent_calls_are_serialized_and_all_answered(policy: TransformersPolicy) -> None:
    sampling = SamplingParams(max_tokens=3)
    results = await asyncio.gather(
        *(policy.complete(CONVERSATION, sampling=sampling) for _ in range(3))
    )
    assert len({tuple(result.token_ids) for result in results}) == 1


def test_tool_messages_keep_their_role_when_the_template_knows_it(
    policy: TransformersPolicy,
) -> None:
    text = policy.tokenizer.decode(policy.encode_messages(CONVERSATION))
    assert "<|im_start|>tool\n<tool_response" in text
    assert text.endswith("<|im_start|>assistant\n")
    no_prompt = policy.tokenizer.decode(
        policy.encode_messages(CONVERSATION, add_generation_prompt=False)
    )
    assert not no_prompt.endswith("<|im_start|>assistant\n")


def test_tool_messages_fall_back_to_user_when_the_template_rejects_them(
    tmp_path: Path, policy: TransformersPolicy
) -> None:
    strict_template = (
        "{% for m in messages %}{% if m['role'] not in ['system', 'user', 'assistant'] %}"
        "{{ raise_exception('unknown role ' + m['role']) }}{% endif %}"
        "<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    tokenizer = policy.tokenizer
    tokenizer.chat_template = strict_template
    strict_dir = build_tiny_model(tmp_path / "strict", tokenizer_from=tokenizer)
    strict = TransformersPolicy(strict_dir)
    text = strict.tokenizer.decode(strict.encode_messages(CONVERSATION))
    assert "<|im_start|>user\n<tool_response" in text
    assert "<|im_start|>tool" not in text


async def test_too_long_prompt_is_a_model_api_error(tmp_path: Path, tiny_model_dir: Path) -> None:
    short_dir = build_tiny_model(
        tmp_path / "short", tokenizer_from=tiny_model_dir, max_positions=16
    )
    with pytest.raises(ModelAPIError, match=r"the prompt has \d+ tokens; .* accepts at most 16"):
        await TransformersPolicy(short_dir).complete(
            CONVERSATION * 3, sampling=SamplingParams(max_tokens=2)
        )


def test_bad_locations_and_settings_are_config_errors(tmp_path: Path, tiny_model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="cannot load the model"):
        TransformersPolicy(tmp_path / "nowhere").load()
    with pytest.raises(ConfigError, match="adapter directory"):
        TransformersPolicy(tiny_model_dir, adapter=tmp_path / "no-adapter")
    with pytest.raises(ConfigError, match="max_new_tokens"):
        TransformersPolicy(tiny_model_dir, max_new_tokens=0)
    with pytest.raises(ConfigError, match="dtype"):
        TransformersPolicy(tiny_model_dir, dtype="int3")  # type: ignore[arg-type]
    empty_adapter = tmp_path / "empty-adapter"
    empty_adapter.mkdir()
    with pytest.raises(ConfigError, match="holds no weights"):
        TransformersPolicy(tiny_model_dir, adapter=empty_adapter)
    (empty_adapter / "adapter_model.safetensors").write_bytes(b"not weights")
    lora = {"peft_type": "LORA", "r": 4, "target_modules": ["q_proj"]}
    for config in ({}, lora):  # no peft_type (peft: KeyError), then damaged weights
        (empty_adapter / "adapter_config.json").write_text(json.dumps(config))
        with pytest.raises(ConfigError, match="cannot load the adapter"):
            TransformersPolicy(tiny_model_dir, adapter=empty_adapter).load()


async def test_lora_adapter_is_applied(tmp_path: Path, tiny_model_dir: Path) -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", FutureWarning
        )  # peft reads a deprecated transformers property
        lora = get_peft_model(base, LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    with torch.no_grad():
        for name, parameter in lora.named_parameters():
            if "lora_B" in name:
                parameter.fill_(0.5)
    lora.save_pretrained(tmp_path / "adapter")
    sampling = SamplingParams(max_tokens=4)
    plain = await TransformersPolicy(tiny_model_dir).complete(CONVERSATION, sampling=sampling)
    adapted = await TransformersPolicy(tiny_model_dir, adapter=tmp_path / "adapter").complete(
        CONVERSATION, sampling=sampling
    )
    assert adapted.logprobs != pytest.approx(plain.logprobs, abs=1e-6)


def test_local_models_never_fetch_hub_kernels(tiny_model_dir: Path) -> None:
    """transformers 5 would kernelize on model.train() on a GPU, fetching kernels from the Hub
    (an offline run then fails): every local model is loaded with them off."""
    from paraagent_runtime.policy.transformers_local import load_causal_lm

    policy = TransformersPolicy(tiny_model_dir)
    policy.load()
    assert policy.model.use_kernels is False
    model = load_causal_lm(tiny_model_dir)
    model.train()
    assert model.use_kernels is False
    assert model.training

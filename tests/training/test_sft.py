from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.toolenv import ToolEnv, generate_tasks
from paraagent_runtime.agent import Agent, AgentConfig
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.policy.base import Message, SamplingParams
from paraagent_runtime.policy.transformers_local import TransformersPolicy
from paraagent_runtime.toolspace import Toolspace
from training.config import load_config
from training.demos import DemoBuild
from training.sft import SFTRunConfig, encode_demo, last_checkpoint, train_sft
from training.sft.trainer import prepare_data

pytestmark = [
    # peft reads transformers' deprecated `is_gradient_checkpointing` while wrapping the model.
    pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing.*:FutureWarning"),
]


@pytest.fixture(scope="module")
def policy(tiny_model: Path) -> TransformersPolicy:
    policy = TransformersPolicy(tiny_model)
    policy.load()
    return policy


def test_mask_covers_exactly_the_assistant_turns(
    demo_build: DemoBuild, policy: TransformersPolicy
) -> None:
    tokenizer = policy.tokenizer
    eos = tokenizer.eos_token_id
    demo = demo_build.demos[0]
    ids, mask = encode_demo(demo.messages, policy, [eos])
    assert ids == policy.encode_messages(demo.messages, add_generation_prompt=False)
    spans: list[list[int]] = []
    for index, bit in enumerate(mask):
        if bit and (index == 0 or not mask[index - 1]):
            spans.append([])
        if bit:
            spans[-1].append(ids[index])
    assistant = [m.content for m in demo.messages if m.role == "assistant"]
    assert [tokenizer.decode(span) for span in spans] == [
        text + tokenizer.eos_token for text in assistant
    ]


def test_each_assistant_span_follows_the_serving_prompt(
    demo_build: DemoBuild, policy: TransformersPolicy
) -> None:
    demo = demo_build.demos[1]
    ids, mask = encode_demo(demo.messages, policy, [policy.tokenizer.eos_token_id])
    starts = [i for i in range(len(mask)) if mask[i] and (i == 0 or not mask[i - 1])]
    prompts = [
        policy.encode_messages(demo.messages[:index])
        for index, message in enumerate(demo.messages)
        if message.role == "assistant"
    ]
    assert [len(prompt) for prompt in prompts] == starts
    assert all(ids[: len(prompt)] == prompt for prompt in prompts)


class _Inconsistent:
    """A chat encoder whose rendering of a conversation does not start with its prompt."""

    def encode_messages(self, messages, *, tools=None, add_generation_prompt=True):
        return [len(messages), 1 if add_generation_prompt else 0, 7]


def test_prefix_inconsistent_template_is_reported() -> None:
    messages = [
        Message(role="user", content="hi"),
        Message(role="assistant", content="<answer>x</answer>"),
    ]
    with pytest.raises(ConfigError, match="prefix-consistent"):
        encode_demo(messages, _Inconsistent(), [7])


def _lora_b_norm(adapter: Path) -> float:
    from safetensors.torch import load_file

    weights = load_file(str(adapter / "adapter_model.safetensors"))
    return sum(float(t.abs().sum()) for name, t in weights.items() if "lora_B" in name)


@pytest.mark.slow
async def test_pipeline_demos_sft_adapter_runs_in_the_agent(
    demo_build: DemoBuild, tiny_model: Path, tmp_path: Path
) -> None:
    import asyncio

    config = SFTRunConfig(
        demos=demo_build.demos_path, model=str(tiny_model), output_dir=tmp_path / "sft",
        max_length=512, drop_long=False, max_demos=8, max_steps=2, batch_size=2,
        learning_rate=1e-2, lora_r=4, lora_alpha=8,
        device="cpu", save_steps=1, logging_steps=1,
    )  # fmt: skip
    result = await asyncio.to_thread(train_sft, config)
    assert result.examples == 8 and result.resumed_from is None
    # LoRA B matrices start at zero: a non-zero B means the optimizer changed the adapter.
    assert _lora_b_norm(result.model_dir) > 0
    assert (result.model_dir / "training_summary.json").is_file()
    assert last_checkpoint(config.output_dir) is not None

    resumed = await asyncio.to_thread(
        train_sft, SFTRunConfig(**{**config.__dict__, "max_steps": 3})
    )
    assert resumed.resumed_from is not None and resumed.resumed_from.name == "checkpoint-2"

    continued = await asyncio.to_thread(
        train_sft,
        SFTRunConfig(
            **{
                **config.__dict__,
                "output_dir": tmp_path / "continued",
                "warmup": 0,
                "init_adapter": result.model_dir,
            }
        ),
    )
    # A fresh schedule on top of the adapter: no resume, and the adapter moves from where it was.
    assert continued.resumed_from is None
    assert _lora_b_norm(continued.model_dir) != _lora_b_norm(result.model_dir)

    task = generate_tasks(1, seed=9)[0]
    env = ToolEnv.builtin().for_task(task)
    toolspace = Toolspace(env.sources)
    await toolspace.refresh()
    policy = TransformersPolicy(tiny_model, adapter=result.model_dir)
    agent = Agent(
        policy, toolspace, AgentConfig(max_turns=2, sampling=SamplingParams(max_tokens=8))
    )
    episode = await agent.run(task.query, task_id=task.id)
    assert episode.turns and episode.turns[0].token_ids
    assert episode.status in ("answered", "max_turns")
    await policy.aclose()


def test_missing_demo_file_is_a_config_error(tiny_model: Path, tmp_path: Path) -> None:
    config = SFTRunConfig(
        demos=tmp_path / "none.jsonl", model=str(tiny_model), output_dir=tmp_path, device="cpu"
    )
    with pytest.raises(ConfigError, match="does not exist"):
        train_sft(config)


def test_several_demo_files_train_together_each_capped_by_max_demos(
    demo_build: DemoBuild, policy: TransformersPolicy, tmp_path: Path
) -> None:
    lines = demo_build.demos_path.read_text(encoding="utf-8").splitlines()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    second.write_text("\n".join(lines[3:8]) + "\n", encoding="utf-8")
    config = load_config(
        SFTRunConfig, assignments=[f"demos=[{first}, {second}]", "max_demos=4", "max_length=4096"]
    )
    assert config.demos == (first, second)
    data = prepare_data(config, policy)
    # max_demos caps each file: all 3 of the first, the first 4 of the second, in that order.
    together = tmp_path / "together.jsonl"
    together.write_text("\n".join(lines[:7]) + "\n", encoding="utf-8")
    expected = prepare_data(SFTRunConfig(demos=together, max_length=4096), policy)
    assert len(data.rows) == 7 and data.rows == expected.rows


def test_a_single_demo_path_is_one_file_and_an_empty_list_is_refused(tmp_path: Path) -> None:
    assert SFTRunConfig(demos=tmp_path / "d.jsonl").demos == (tmp_path / "d.jsonl",)
    assert load_config(SFTRunConfig, assignments=["demos=a.jsonl"]).demos == (Path("a.jsonl"),)
    with pytest.raises(ConfigError, match="name at least one demo file"):
        SFTRunConfig(demos=())


def test_init_adapter_must_be_an_adapter_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no adapter_config.json; it holds no LoRA adapter"):
        SFTRunConfig(init_adapter=tmp_path)
    run_dir = tmp_path / "run"
    (run_dir / "adapter").mkdir(parents=True)
    (run_dir / "adapter" / "adapter_config.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"did you mean .*run/adapter\?"):
        SFTRunConfig(init_adapter=run_dir)
    (tmp_path / "adapter_config.json").write_text("{}")
    with pytest.raises(ConfigError, match="needs lora: true"):
        SFTRunConfig(init_adapter=tmp_path, lora=False)


def test_a_later_stage_config_loads_before_its_init_adapter_exists(
    demo_build: DemoBuild, tiny_model: Path, tmp_path: Path
) -> None:
    stage_two = SFTRunConfig(
        demos=demo_build.demos_path,
        model=str(tiny_model),
        init_adapter=tmp_path / "stage-one" / "adapter",
        output_dir=tmp_path / "stage-two",
        device="cpu",
    )
    with pytest.raises(ConfigError, match="train the stage that writes it first"):
        train_sft(stage_two)
    assert not stage_two.output_dir.exists()


def test_too_short_max_length_drops_everything(
    demo_build: DemoBuild, tiny_model: Path, tmp_path: Path
) -> None:
    config = SFTRunConfig(
        demos=demo_build.demos_path,
        model=str(tiny_model),
        output_dir=tmp_path,
        max_length=64,
        device="cpu",
    )
    with pytest.raises(ConfigError, match="fits max_length=64"):
        train_sft(config)


def test_mistake_turns_carry_no_loss(demo_build: DemoBuild, policy: TransformersPolicy) -> None:
    demo = next(demo for demo in demo_build.demos if demo.mistake_turns)
    eos = [policy.tokenizer.eos_token_id]
    _, full = encode_demo(demo.messages, policy, eos)
    _, skipped = encode_demo(demo.messages, policy, eos, skip_turns=demo.mistake_turns)
    assistant = [m for m in demo.messages if m.role == "assistant"]
    mistake = assistant[demo.mistake_turns[0]].content
    dropped = sum(full) - sum(skipped)
    assert 0 < dropped == len(policy.tokenizer(mistake)["input_ids"]) + 1

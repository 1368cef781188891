from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.errors import ConfigError, UserError
from paraagent_runtime.policy import TransformersPolicy
from paraagent_runtime.policy.tiny import build_tiny_model
from paraagent_runtime.tasks import save_tasks
from training.algo import TokenRow, collate
from training.rl import RLConfig, RLTrainer
from training.rl.trainer import CHECKPOINT, CURVES, METRICS
from training.task_source import is_catalog_task

from .helpers import rl_config as _config
from .helpers import rl_task as _task
from .helpers import sft_adapter


@pytest.mark.slow
def test_two_rl_steps_end_to_end_change_params_and_resume(
    cold_start: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = AutoModelForCausalLM.from_pretrained(cold_start).state_dict()
    trainer = RLTrainer(_config(cold_start, tmp_path), tasks=[_task()])
    policy = trainer.engine.policy
    assert isinstance(policy, TransformersPolicy)
    clear = policy.clear_prefix_cache
    cleared: list[int] = []  # the step each prefix-cache clear came before

    def clear_and_count() -> None:
        cleared.append(trainer.step)
        clear()

    monkeypatch.setattr(policy, "clear_prefix_cache", clear_and_count)
    history = trainer.train()
    trainer.close()
    assert [m["step"] for m in history] == [1, 2]
    assert any(m["reward/trajectory_std"] > 0 or m["reward/step_final_std"] > 0 for m in history)
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[name], after[name]) for name in before)
    for key in ("reward/trajectory_mean", "zero_variance_groups", "kl", "success", "loss"):
        assert key in history[-1]
    assert all(0.0 <= m["rollout_prefix_reuse"] <= 1.0 for m in history)
    # Sampled at T = 1: every sampled token had probability below 1, so the mean NLL is above 0.
    assert all(0.0 < m["rollout_nll"] < 20.0 for m in history)
    # Every sampled token fits the default max_length, so all of them are trained.
    assert all(m["truncated_tokens"] == 0 for m in history)
    assert all(m["train_tokens"] == m["rollout_tokens"] for m in history)
    # Multi-level advantages are whitened over the batch's tokens: no net push up or down.
    assert all(abs(m["advantage_mean"]) < 1e-4 for m in history)
    # Each step's sync dropped the keys and values the previous weights computed, and the cache
    # stayed on (the tiny model's cache is reusable).
    assert cleared == [0, 1] and policy.prefix_cache_stats is not None
    assert (tmp_path / CURVES).stat().st_size > 0
    assert (tmp_path / CHECKPOINT / "state.json").is_file()

    # A step logged after the last checkpoint (the process died before saving) runs again on
    # resume, and is logged once.
    with (tmp_path / METRICS).open("a") as handle:
        handle.write(json.dumps({**history[-1], "step": 3}) + "\n")
    resumed = RLTrainer(_config(cold_start, tmp_path, steps=3), tasks=[_task()])
    assert resumed.step == 2
    assert len((tmp_path / METRICS).read_text().splitlines()) == 2
    assert [m["step"] for m in resumed.train()] == [3]
    resumed.close()
    lines = (tmp_path / METRICS).read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1, 2, 3]


def _row(prompt: list[int], sampled: list[int], turn: int) -> TokenRow:
    row = TokenRow()
    row.extend(prompt)
    row.extend(sampled, turn=turn, logprobs=[0.0] * len(sampled))
    return row


@pytest.mark.parametrize("aggregation", ["token_mean", "sequence_mean", "constant"])
def test_micro_batches_take_the_step_of_the_whole_batch(tmp_path: Path, aggregation: str) -> None:
    # Random init: the cold start's peaked logits amplify the float noise of padded rows.
    model = build_tiny_model(tmp_path / "model", hidden_size=64, num_layers=1, seed=0)
    # Episode 0 spans two rows (its second turn's prompt does not extend the first row).
    batch = collate(
        [
            [_row([1, 2, 3], [4, 5], 0), _row([1, 9, 3, 4], [6, 7, 8, 9], 1)],
            [_row([1, 2], [3, 4, 5], 0)],
        ],
        pad_token_id=0,
    )
    advantages = torch.where(
        batch.assistant_mask, torch.tensor([[1.0], [1.0], [-3.0]]), torch.tensor(0.0)
    )
    updates = []
    for rows in (1, 3):
        config = _config(
            model, tmp_path / str(rows), aggregation=aggregation, micro_batch_rows=rows
        )
        trainer = RLTrainer(config, tasks=[_task()])
        batch.old_logprobs = trainer.logprobs(batch)  # on-policy, as at a step's start
        updates.append(trainer.update(batch, advantages))
        trainer.close()
    split, whole = updates
    assert split["train_rows"] == whole["train_rows"] == 3
    assert split["loss"] == pytest.approx(whole["loss"], rel=1e-4)
    assert (
        split["grad_norm"] == pytest.approx(whole["grad_norm"], rel=1e-4) and whole["grad_norm"] > 0
    )
    if aggregation == "sequence_mean":
        # Each episode weighs the same, however many rows it spans: (+1 - 3) / 2.
        assert whole["advantage_mean"] == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"group_size": 1}, "group_size"),
        ({"temperature": 0.0}, "temperature"),
        ({"steps": 0}, "steps"),
        ({"reward": {"nope": 1}}, "reward"),
        ({"advantage": {"estimator": "ppo"}}, "estimator"),
        ({"aggregation": "sum"}, "aggregation"),
        ({"task_families": ["nope"]}, "task_families: unknown nope"),
        ({"task_families": "stock_compare"}, "expected a list of family names"),
        ({"task_families": []}, "task_families: unknown \\(empty list\\)"),
        ({"task_families": ["recipe_nutrition"]}, "may not use held-out families"),
        ({"torch_threads": 0}, "torch_threads: must be an integer >= 1"),
        ({"torch_threads": True}, "torch_threads: must be an integer >= 1"),
    ],
)
def test_rl_config_rejects_bad_values(bad: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        RLConfig(**bad)


def test_generated_rl_tasks_come_from_the_configured_families(tmp_path: Path) -> None:
    config = RLConfig(
        n_tasks=4, task_families=["stock_compare", "email_contact"], output_dir=tmp_path
    )
    assert config.task_families == ("stock_compare", "email_contact")
    assert {task.family for task in config.training_tasks()} == {"stock_compare", "email_contact"}


def test_task_families_also_filter_a_tasks_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    save_tasks(generate_tasks(6, seed=0), path)
    config = RLConfig(tasks_file=path, task_families=["hotel_compare"], output_dir=tmp_path)
    assert {task.family for task in config.training_tasks()} == {"hotel_compare"}
    assert len(RLConfig(tasks_file=path, output_dir=tmp_path).training_tasks()) == 6
    absent = RLConfig(tasks_file=path, task_families=["city_pair_facts"], output_dir=tmp_path)
    with pytest.raises(ConfigError, match="has no task of city_pair_facts"):
        absent.training_tasks()


def test_rl_config_accepts_nested_mappings() -> None:
    config = RLConfig(reward={"traj_correct": 2.0}, advantage={"estimator": "grpo"})
    assert config.reward.traj_correct == 2.0 and config.advantage.estimator == "grpo"


@pytest.mark.slow
def test_lora_rl_updates_only_the_adapter(cold_start: Path, tmp_path: Path) -> None:
    adapter = sft_adapter(cold_start, tmp_path / "sft-adapter")
    config = _config(
        cold_start,
        tmp_path / "run",
        steps=1,
        lora=True,
        adapter=adapter,
        learning_rate=1e-2,
        group_size=8,
        seeded_rollouts=False,
        # KL to the base (adapter off) has a gradient even when every rollout of the random
        # model earns the same reward, which depends on the samples (and so on thread count).
        reference="base",
        # As the shipped LoRA config runs: recompute activations in backward.
        gradient_checkpointing=True,
    )
    trainer = RLTrainer(config, tasks=[_task()])
    assert any(getattr(m, "gradient_checkpointing", False) for m in trainer.model.modules())
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    history = trainer.train()
    trainer.close()
    assert history[0]["train_tokens"] > 0 and history[0]["grad_norm"] > 0
    # Unseeded rollouts of one step share batched generation.
    assert trainer.engine.policy.batch_stats.largest > 1
    after = dict(trainer.model.named_parameters())
    changed = {n for n in before if not torch.equal(before[n], after[n].detach())}
    assert changed and all(".lora_" in n and ".default." in n for n in changed)
    checkpoint = tmp_path / "run" / CHECKPOINT
    assert (checkpoint / "adapter_config.json").is_file()
    assert not (checkpoint / "model.safetensors").exists()

    resumed = RLTrainer(
        _config(cold_start, tmp_path / "run", steps=1, lora=True, adapter=adapter), tasks=[_task()]
    )
    assert resumed.step == 1
    for name, param in resumed.model.named_parameters():
        if ".default." in name:
            torch.testing.assert_close(param.detach(), after[name].detach())
    resumed.close()


def test_vllm_rollouts_without_vllm_raise_a_clear_user_error(tmp_path: Path) -> None:
    pytest.importorskip("peft")
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed")
    config = RLConfig(output_dir=tmp_path, lora=True, rollout_backend="vllm", device="cuda")
    with pytest.raises(UserError, match="vllm"):
        RLTrainer(config, tasks=[_task()])


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"rollout_backend": "vllm", "device": "cuda"}, "lora: true"),
        ({"rollout_backend": "vllm", "lora": True}, "device cuda"),
        (
            {
                "rollout_backend": "vllm",
                "lora": True,
                "device": "cuda",
                "vllm_gpu_memory_utilization": 1.5,
            },
            "gpu_memory",
        ),
        ({"rollout_backend": "vllm_server", "lora": True}, "vllm_server_url"),
        (
            {"rollout_backend": "vllm_server", "lora": True, "vllm_server_url": "http://h:8000/v1"},
            "vllm_server_model",
        ),
        ({"rollout_backend": "sglang"}, "rollout_backend"),
    ],
)
def test_rollout_backend_config_is_validated(overrides: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        RLConfig(**overrides)


def test_time_budget_stops_after_the_step_that_ran_past_it_and_a_rerun_resumes(
    cold_start: Path, tmp_path: Path
) -> None:
    config = _config(cold_start, tmp_path, steps=3, save_every=10, max_time_s=1e-6)
    trainer = RLTrainer(config, tasks=[_task()])
    assert [m["step"] for m in trainer.train()] == [1]
    trainer.close()
    # The last step of a budgeted call is checkpointed even off the save_every schedule.
    state = json.loads((tmp_path / CHECKPOINT / "state.json").read_text())
    assert state["step"] == 1
    resumed = RLTrainer(_config(cold_start, tmp_path, steps=3, save_every=10), tasks=[_task()])
    assert [m["step"] for m in resumed.train()] == [2, 3]
    resumed.close()


def test_gradient_noise_is_logged_per_step_when_micro_batches_keep_groups_apart(
    cold_start: Path, tmp_path: Path
) -> None:
    def run(out: Path, micro_batch_rows: int) -> list[dict]:
        config = _config(
            cold_start,
            out,
            tasks_per_step=2,
            gradient_noise=True,
            micro_batch_rows=micro_batch_rows,
        )
        trainer = RLTrainer(config, tasks=[_task(), _task()])
        history = trainer.train()
        trainer.close()
        return history

    measured = [m for m in run(tmp_path / "pure", 1) if "grad_snr" in m]
    assert measured and all(math.isfinite(m["grad_snr"]) for m in measured)
    assert all(-1.0 <= m.get("grad_group_cosine", 0.0) <= 1.0 for m in measured)
    # One micro-batch holding both groups: no group gradient to read, nothing logged.
    assert not any("grad_snr" in m for m in run(tmp_path / "mixed", 64))


def test_time_budget_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="max_time_s"):
        RLConfig(max_time_s=0)


@pytest.mark.gpu
def test_one_lora_step_on_cuda_with_colocated_vllm(cold_start: Path, tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    pytest.importorskip("vllm")
    config = _config(
        cold_start,
        tmp_path,
        steps=1,
        lora=True,
        device="cuda",
        rollout_backend="vllm",
        vllm_gpu_memory_utilization=0.2,
        vllm_max_model_len=4096,
    )
    trainer = RLTrainer(config, tasks=[_task()])
    history = trainer.train()
    trainer.close()
    assert history[0]["rollout_tokens"] > 0 and history[0]["train_tokens"] > 0


@pytest.mark.gpu
def test_one_lora_step_on_cuda_with_transformers_rollouts(cold_start: Path, tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    config = _config(cold_start, tmp_path, steps=1, lora=True, device="cuda", dtype="bfloat16")
    trainer = RLTrainer(config, tasks=[_task()])
    history = trainer.train()
    trainer.close()
    assert history[0]["rollout_tokens"] > 0


def test_catalog_tasks_train_and_evaluate_in_their_own_environments(
    cold_start: Path, catalog_file: Path, tmp_path: Path
) -> None:
    source = {"kind": "catalog", "catalog": str(catalog_file), "distractors": 8}
    trainer = RLTrainer(_config(cold_start, tmp_path, steps=1, n_tasks=2, task_source=source))
    assert all(is_catalog_task(task) for task in trainer.tasks)
    for task in trainer.tasks:
        env = trainer.task_set.env_for(task)
        assert set(task.tools) <= {record.id for record in env.records}
        assert len(env.records) == len(task.tools) + 8
    assert [m["step"] for m in trainer.train()] == [1]
    summary, rows = trainer.evaluate(trainer.tasks)
    trainer.close()
    assert [row.task_id for row in rows] == [task.id for task in trainer.tasks]
    assert {row.family for row in rows} <= {"catalog_g1", "catalog_g2", "catalog_g3"}

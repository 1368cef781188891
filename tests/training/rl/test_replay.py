from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.trajectory import Episode, TrajectoryWriter, read_episodes
from training.algo import collate, episode_rows
from training.rl import RLConfig, RLTrainer
from training.rl.replay import ReplayPool

from .helpers import rl_config as _config

FAMILIES = ["city_pair_facts"]


def _evaluate(cold_start: Path, out: Path, split: str) -> list[Episode]:
    """Four sampled episodes of the tiny cold start on two ``split`` tasks, as train eval keeps."""
    config = _config(cold_start, out / "eval", task_families=FAMILIES)
    tasks = generate_tasks(2, seed=0, split=split, families=FAMILIES)
    trainer = RLTrainer(config)
    path = out / f"{split}.jsonl"
    trainer.evaluate(tasks, samples=2, temperature=1.0, episodes=path)
    trainer.close()
    return list(read_episodes(path))


def _write(path: Path, episodes: list[Episode], succeeded: set[int]) -> Path:
    """The episodes with the checker's verdict set: the ones in ``succeeded`` succeed."""
    with TrajectoryWriter(path) as writer:
        for index, episode in enumerate(episodes):
            metrics = episode.metadata["metrics"] | {"success": index in succeeded}
            writer.write(
                episode.model_copy(update={"metadata": {**episode.metadata, "metrics": metrics}})
            )
    return path


@pytest.fixture
def recorded(cold_start: Path, tmp_path: Path) -> list[Episode]:
    return _evaluate(cold_start, tmp_path, "train")


def _replaying(cold_start: Path, out: Path, episodes: Path, **overrides: object) -> RLConfig:
    return _config(
        cold_start,
        out,
        task_families=FAMILIES,
        replay={"episodes": episodes, "per_step": 2},
        **overrides,
    )


def test_the_pool_holds_the_successes_and_draws_reproducibly_per_step(
    cold_start: Path, tmp_path: Path, recorded: list[Episode]
) -> None:
    path = _write(tmp_path / "start.jsonl", recorded, succeeded={0, 2, 3})
    pool = ReplayPool.from_config(_replaying(cold_start, tmp_path / "run", path))
    assert pool is not None
    assert [e.id for e in pool.episodes] == [recorded[i].id for i in (0, 2, 3)]
    first = pool.draw(0)
    assert len(first) == 2 and [e.id for e in first] == [e.id for e in pool.draw(0)]
    assert len({tuple(e.id for e in pool.draw(step)) for step in range(8)}) > 1
    assert ReplayPool.from_config(_config(cold_start, tmp_path / "none")) is None


def test_a_replaying_step_trains_the_replayed_tokens_and_pushes_them_up(
    cold_start: Path, tmp_path: Path, recorded: list[Episode]
) -> None:
    path = _write(tmp_path / "start.jsonl", recorded, succeeded={0, 1, 2, 3})
    trainer = RLTrainer(_replaying(cold_start, tmp_path / "replay", path))
    assert trainer.replay is not None
    metrics = trainer.train_step()
    replay_tokens = sum(len(t.token_ids or []) for e in trainer.replay.draw(0) for t in e.turns)
    assert metrics["replayed_episodes"] == 2 and metrics["truncated_tokens"] == 0
    assert metrics["train_tokens"] == metrics["rollout_tokens"] + replay_tokens

    trainer.close()

    # At the start (no update yet; the recorded log-probs are this policy's), a group of four
    # identical rollouts has no signal and the KL none: a small step is the replay's alone.
    fresh = RLTrainer(_replaying(cold_start, tmp_path / "fresh", path, learning_rate=1e-4))
    assert fresh.replay is not None
    replayed = fresh.replay.draw(0)
    batch = collate([episode_rows(e) for e in replayed], pad_token_id=0)
    mask = batch.assistant_mask

    def replayed_logprob() -> float:
        return float(fresh.logprobs(batch)[mask].sum())

    before = replayed_logprob()
    task = next(t for t in fresh.tasks if t.id == recorded[1].task_id)
    update, _ = fresh.update_on([recorded[1]] * 4, [task] * 4, [0] * 4, replayed=replayed)
    after = replayed_logprob()
    fresh.close()
    assert update["grad_norm"] > 0 and after > before


def test_replay_refuses_held_out_episodes_and_a_pool_without_success(
    cold_start: Path, tmp_path: Path, recorded: list[Episode]
) -> None:
    held_out = _write(tmp_path / "test.jsonl", _evaluate(cold_start, tmp_path, "test-seen"), {0})
    with pytest.raises(ConfigError, match="held-out task test-seen-"):
        ReplayPool.from_config(_replaying(cold_start, tmp_path / "run", held_out))
    failed = _write(tmp_path / "failed.jsonl", recorded, succeeded=set())
    with pytest.raises(ConfigError, match="no successful episode in"):
        ReplayPool.from_config(_replaying(cold_start, tmp_path / "run", failed))
    tokenless = [
        recorded[0].model_copy(
            update={
                "turns": [turn.model_copy(update={"token_ids": None}) for turn in recorded[0].turns]
            }
        )
    ]
    bare = _write(tmp_path / "bare.jsonl", tokenless, succeeded={0})
    with pytest.raises(ConfigError, match="bare.jsonl: episode .* no token ids"):
        ReplayPool.from_config(_replaying(cold_start, tmp_path / "run", bare))
    with pytest.raises(ConfigError, match="no such episodes file"):
        ReplayPool.from_config(_replaying(cold_start, tmp_path / "run", tmp_path / "nope.jsonl"))


@pytest.mark.parametrize(
    ("replay", "match"),
    [
        ({"per_step": 2}, "set replay.episodes"),
        ({"per_step": -1}, "per_step: must be >= 0"),
        ({"advantage": 0.0}, "advantage: must be > 0"),
        ({"episodes": "x.jsonl", "rate": 1}, "unknown field"),
    ],
)
def test_replay_config_rejects_bad_values(replay: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        RLConfig(replay=replay)

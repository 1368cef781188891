"""Replay of the starting policy's successful episodes: an anchor against forgetting.

:class:`~training.rl.config.ReplayConfig` says why and how; :class:`ReplayPool` loads the pool and
draws each step's episodes. The trainer adds them to the step's batch as rows whose tokens all
carry the configured advantage (:func:`~training.algo.advantages.token_advantages`'s
``fixed_rows``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from paraagent_runtime import ConfigError, Episode
from training.algo.tokens import episode_rows
from training.evaluate import read_evaluated

from .config import RLConfig

__all__ = ["ReplayPool"]


class ReplayPool:
    """The successful episodes a run replays, drawn reproducibly per step (resume-safe).

    Args:
        episodes: The pool (successful episodes with token ids and log-probs).
        per_step: Episodes drawn per step (the whole pool when it is smaller).
        seed: Seed of the draws; with the step it fixes each step's episodes.
    """

    def __init__(self, episodes: Sequence[Episode], *, per_step: int, seed: int) -> None:
        self.episodes = list(episodes)
        self.per_step = per_step
        self.seed = seed

    @classmethod
    def from_config(cls, config: RLConfig) -> ReplayPool | None:
        """The pool ``config.replay`` names (``None`` when ``per_step`` is 0).

        Raises:
            ConfigError: the file cannot be read (see
                :func:`~training.evaluate.read_evaluated`), an episode is of a held-out task
                (``test-*``: replaying it would train on the evaluation), a successful episode
                lacks token ids or log-probs, or none succeeded.
        """
        replay = config.replay
        if not replay.per_step or replay.episodes is None:
            return None
        pool = []
        for episode, metrics in read_evaluated(replay.episodes, policy=replay.policy):
            if metrics.task_id.startswith("test-"):
                raise ConfigError(
                    f"replay: {replay.episodes} holds episodes of held-out task "
                    f"{metrics.task_id}; replay episodes of training tasks only "
                    "(train eval --split train)"
                )
            if not metrics.success:
                continue
            try:
                episode_rows(episode)
            except ConfigError as exc:
                raise ConfigError(f"replay: {replay.episodes}: {exc}") from exc
            pool.append(episode)
        if not pool:
            raise ConfigError(f"replay: no successful episode in {replay.episodes}")
        return cls(pool, per_step=replay.per_step, seed=config.seed)

    def draw(self, step: int) -> list[Episode]:
        """The episodes replayed at ``step`` (the same for the same seed and step)."""
        rng = random.Random(f"replay:{self.seed}:{step}")
        return rng.sample(self.episodes, min(self.per_step, len(self.episodes)))

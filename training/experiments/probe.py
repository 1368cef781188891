"""Probe a policy's RL gradient on recorded episodes: is one step's update mostly noise?

The held-out evaluation of an ablation keeps its episodes (``start/heldout.jsonl``: K samples of
each of N tasks at T = 1), which is a batch of N rollout groups. :func:`probe_gradient` loads the
config's policy, scores those episodes with the config's rewards and advantages, and runs one
update on them with ``gradient_noise`` on, so the result holds ``grad_snr`` and
``grad_group_cosine`` (:mod:`training.algo.gradient_noise`) for an N-group batch, with no
rollout to generate. The SNR of a step of ``tasks_per_step`` groups is
``grad_snr · tasks_per_step / N``.

``paraagent train rl probe --config training/configs/rl_cpu_known_families.yaml
--episodes runs/rl-known-premature/start/heldout.jsonl``
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from paraagent_runtime import ConfigError, read_episodes
from training.rl.config import RLConfig
from training.rl.trainer import RLTrainer

from .heldout import heldout_tasks

__all__ = ["probe_gradient"]


def probe_gradient(config: RLConfig, episodes_path: Path) -> dict[str, Any]:
    """One update of ``config``'s starting policy on the held-out episodes in ``episodes_path``.

    The episodes' tasks are the held-out tasks an ablation with ``config`` evaluates (same
    ``task_seed`` and ``task_families``); each task's episodes form one group. The weights are
    not saved; the probe's config goes to ``<output_dir>/probe``.

    Returns:
        The update's metrics (``grad_snr`` among them when the groups' gradients differ), plus
        ``groups`` and ``episodes``.

    Raises:
        ConfigError: the file is missing or malformed, holds episodes of fewer than two tasks,
            or of a task that is not among the held-out tasks.
    """
    if not episodes_path.is_file():
        raise ConfigError(f"episodes file {str(episodes_path)!r} does not exist")
    episodes = list(read_episodes(episodes_path, strict=True))
    task_ids = list(dict.fromkeys(episode.task_id for episode in episodes))
    if len(task_ids) < 2:
        raise ConfigError(f"{episodes_path}: need episodes of at least two tasks (groups)")
    tasks = heldout_tasks(config, len(task_ids))
    by_id = {task.id: task for task in tasks}
    unknown = [task_id for task_id in task_ids if task_id not in by_id]
    if unknown:
        raise ConfigError(
            f"{episodes_path}: {unknown[0]} is not one of the {len(tasks)} held-out tasks of "
            "this config (task_seed, task_families)"
        )
    groups = [task_ids.index(episode.task_id) for episode in episodes]
    probe = dataclasses.replace(
        config,
        gradient_noise=True,
        resume=False,
        output_dir=config.output_dir / "probe",
        micro_batch_rows=1,
    )
    trainer = RLTrainer(probe)
    try:
        update, _ = trainer.update_on(
            episodes, [by_id[episode.task_id] for episode in episodes], groups
        )
    finally:
        trainer.close()
    return {**update, "groups": len(task_ids), "episodes": len(episodes)}

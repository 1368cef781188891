"""RL rollout benchmark: one RL step's rollouts on each rollout backend, side by side.

``python -m benchmarks.rl_rollouts --config training/configs/rl_cpu.yaml`` runs the config's
first step (same tasks, same seed) once per backend (``--backends``, default ``transformers`` and
``onnx``; ``--repeats`` rounds, interleaved so every backend sees the same load) and reports the
step's rollout time (weights sync included: for ``onnx`` the adapter's merged weights written
into the export and loaded, also reported alone), generated tokens, tokens/s and the update time.
The one-time base-model export of ``onnx`` is done (and timed) before the first round. ``--set
FIELD=VALUE`` overrides the config (e.g. ``tasks_per_step=1`` for a smoke run).

Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from training.config import load_config
from training.rl import RLConfig
from training.rl.trainer import RLTrainer

__all__ = ["one_step", "table"]


def one_step(config: RLConfig) -> dict[str, Any]:
    """Run the first RL step of ``config`` and return its rollout and update timings."""
    trainer = RLTrainer(config)
    try:
        metrics = trainer.train_step()
        rollout_s = metrics["rollout_tokens"] / metrics["rollout_tokens_per_s"]
        return {
            "backend": config.rollout_backend,
            "rollout_s": round(rollout_s, 2),
            "sync_s": round(getattr(trainer.engine, "last_sync_s", 0.0), 2),
            "rollout_tokens": metrics["rollout_tokens"],
            "rollout_tokens_per_s": round(metrics["rollout_tokens_per_s"], 2),
            "prefix_reuse": round(metrics["rollout_prefix_reuse"], 3),
            "update_s": round(metrics["step_time_s"] - rollout_s, 2),
        }
    finally:
        trainer.close()


def _base_export(config: RLConfig) -> float:
    """Seconds of the one-time export of the base model (0 when it is cached)."""
    from paraagent_runtime.policy.ort_export import ensure_ort_model
    from paraagent_runtime.policy.smollm2 import ensure_smollm2

    started = time.perf_counter()
    ensure_ort_model(Path(config.model) if config.model else ensure_smollm2())
    return time.perf_counter() - started


def table(report: dict[str, Any]) -> Table:
    """The median of each backend's rounds as a rich table, with the ratio to the first."""
    result = Table(
        title=f"one RL step's rollouts: {report['config']}, {report['rollouts']} rollouts, "
        f"{report['repeats']} round(s)"
    )
    headers = ("backend", "rollout s", "of it sync s", "tokens", "tokens/s", "speed-up", "update s")
    for header in headers:
        result.add_column(header, justify="right")
    for row in report["results"]:
        result.add_row(
            row["backend"],
            f"{row['rollout_s']:.1f}",
            f"{row['sync_s']:.1f}",
            str(row["rollout_tokens"]),
            f"{row['rollout_tokens_per_s']:.1f}",
            f"{row['speedup']:.2f}x",
            f"{row['update_s']:.1f}",
        )
    return result


def main(argv: list[str] | None = None) -> None:
    """Run every backend's first step; print the JSON report, then the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("training/configs/rl_cpu.yaml"))
    parser.add_argument("--backends", default="transformers,onnx", help="comma-separated")
    parser.add_argument("--repeats", type=int, default=1, help="interleaved rounds")
    parser.add_argument("--set", action="append", default=[], help="FIELD=VALUE override")
    parser.add_argument("--json", type=Path, help="also write the JSON report here")
    args = parser.parse_args(argv)
    backends = [name.strip() for name in args.backends.split(",") if name.strip()]
    with tempfile.TemporaryDirectory() as scratch:

        def config(backend: str) -> RLConfig:
            return load_config(
                RLConfig,
                args.config,
                assignments=args.set,
                rollout_backend=backend,
                output_dir=Path(scratch) / backend,
                steps=1,
                resume=False,
                save_every=10**6,
            )

        rollouts = config(backends[0]).tasks_per_step * config(backends[0]).group_size
        export_s = _base_export(config("onnx")) if "onnx" in backends else 0.0
        rounds = [[one_step(config(backend)) for backend in backends] for _ in range(args.repeats)]
    rows = []
    for index, backend in enumerate(backends):
        runs = [round_[index] for round_ in rounds]
        row = {
            key: statistics.median(run[key] for run in runs)
            for key in ("rollout_s", "sync_s", "rollout_tokens", "rollout_tokens_per_s", "update_s")
        }
        rows.append({"backend": backend, **row, "runs": runs})
    for row in rows:
        row["speedup"] = round(rows[0]["rollout_s"] / row["rollout_s"], 2)
    report = {
        "config": str(args.config),
        "overrides": args.set,
        "rollouts": rollouts,
        "repeats": args.repeats,
        "onnx_base_export_s": round(export_s, 1),
        "results": rows,
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    Console().print(table(report))


if __name__ == "__main__":
    main()

"""``paraagent train rl``: the typer sub-app mounted by the training CLI."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from paraagent_runtime import ConfigError, ParaAgentError
from paraagent_runtime.cli import options
from training.cli_options import SetOption

if TYPE_CHECKING:
    from .config import RLConfig

__all__ = ["rl_app"]

rl_app = typer.Typer(
    help="RL with multi-level advantage decoupling on ToolEnv tasks.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)


def _load(
    config: Path | None,
    assignments: list[str] | None,
    model: str | None,
    adapter: Path | None,
    **overrides: Any,
) -> RLConfig:
    """The RL config file, then ``--set``, then the named options; ``--adapter`` implies LoRA."""
    from training.config import load_config

    from .config import RLConfig

    lora = True if adapter is not None else None
    return load_config(
        RLConfig,
        config,
        assignments=assignments or (),
        model=model,
        adapter=adapter,
        lora=lora,
        **overrides,
    )


def _summary(metrics: dict[str, Any]) -> str:
    """An RL step's metrics in a few words (the full set is in metrics.jsonl)."""
    return (
        f"reward {metrics['reward/trajectory_mean']:.3f} success {metrics['success']:.2f} "
        f"kl {metrics['kl']:.4f}"
    )


@rl_app.callback(invoke_without_command=True)
def rl(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="RLConfig YAML/JSON file.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Starting checkpoint directory.")] = None,
    adapter: Annotated[
        Path | None, typer.Option(help="SFT LoRA adapter to continue (sets lora: true).")
    ] = None,
    output_dir: Annotated[
        Path | None, typer.Option(help="Where metrics, checkpoints and the PNG go.")
    ] = None,
    steps: Annotated[int | None, typer.Option(min=1, help="Optimizer steps in total.")] = None,
    estimator: Annotated[
        str | None, typer.Option(help="grpo, dr_grpo, grpo_summed, gdpo or multilevel.")
    ] = None,
    assignments: SetOption = None,
) -> None:
    """Train with RL; options override the config file."""
    if ctx.invoked_subcommand is not None:
        return
    from ..progress import StepProgress
    from .trainer import RLTrainer

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        loaded = _load(config, assignments, model, adapter, output_dir=output_dir, steps=steps)
        if estimator is not None:
            loaded.advantage = type(loaded.advantage)(
                **{**vars(loaded.advantage), "estimator": estimator}
            )
        # Loading the model and the rollout engine may take minutes on a CPU; say so first (once
        # under a distributed launcher, which numbers its processes in RANK).
        if os.environ.get("RANK", "0") == "0":
            typer.echo(f"rl: loading {loaded.model or 'the base model'} …")
        trainer = RLTrainer(loaded)
        try:
            with StepProgress("rl", loaded.steps, start=trainer.step) as progress:
                history = trainer.train(
                    on_step=lambda step, metrics: progress.advance_to(step, _summary(metrics))
                )
        finally:
            trainer.close()
    except ParaAgentError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    last = history[-1] if history else {}
    typer.echo(
        f"done: {len(history)} step(s) to step {last.get('step', '-')}; "
        f"success {last.get('success', float('nan')):.2f}; "
        f"curves in {loaded.output_dir / 'curves.png'}"
    )


@rl_app.command("ablation")
def ablation(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="RLConfig YAML/JSON shared by every run.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Starting checkpoint directory.")] = None,
    adapter: Annotated[
        Path | None, typer.Option(help="SFT LoRA adapter every run starts from (sets lora: true).")
    ] = None,
    output_dir: Annotated[Path, typer.Option(help="Runs and the comparison.")] = Path(
        "runs/rl-ablation"
    ),
    steps: Annotated[int | None, typer.Option(min=1, help="Steps per run.")] = None,
    estimator: Annotated[
        list[str] | None,
        typer.Option(help="Estimators to compare (repeat; default: the arm set's)."),
    ] = None,
    arms: Annotated[
        str | None,
        typer.Option(
            help="Named arm set: default (grpo, multilevel) or decoupling (grpo, grpo_summed, "
            "gdpo, multilevel; each paired vs grpo, the last three also with each other). Not with "
            "--estimator."
        ),
    ] = None,
    report_only: Annotated[
        bool,
        typer.Option(
            "--report-only", help="Train and evaluate nothing: rewrite the report from the runs."
        ),
    ] = False,
    seed: Annotated[list[int] | None, options.seed("Seeds (repeat; default 0 and 1).")] = None,
    window: Annotated[int, typer.Option(min=1, help="Final steps averaged into the table.")] = 5,
    heldout_tasks: Annotated[
        int,
        typer.Option(min=0, help="Held-out dev tasks for the start and each final policy."),
    ] = 0,
    heldout_samples: Annotated[
        int, typer.Option(min=1, help="Episodes per held-out task (needs --heldout-temperature).")
    ] = 1,
    heldout_temperature: Annotated[
        float, typer.Option(min=0.0, help="Held-out sampling temperature (0 = greedy).")
    ] = 0.0,
    keep_dir: Annotated[
        Path | None,
        typer.Option(
            help="Second home (e.g. in git) for finished runs' small files: restored from first, "
            "updated as each run finishes, so a lost machine loses no finished run."
        ),
    ] = None,
    assignments: SetOption = None,
) -> None:
    """Advantage estimators side by side: same seeds and budget, a table and a PNG."""
    from training.experiments.ablation import arm_set, run_ablation
    from training.experiments.heldout import Heldout

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        base = _load(config, assignments, model, adapter, steps=steps)
        heldout = None
        if heldout_tasks:
            heldout = Heldout(
                tasks=heldout_tasks, samples=heldout_samples, temperature=heldout_temperature
            )
        elif heldout_samples != 1 or heldout_temperature != 0:
            raise ConfigError("--heldout-samples / --heldout-temperature need --heldout-tasks N")
        if arms is not None and estimator:
            raise ConfigError("give --arms or --estimator, not both")
        chosen = arm_set(arms or "default")
        run_ablation(
            base,
            output_dir=output_dir,
            estimators=estimator or chosen.estimators,
            seeds=seed or (0, 1),
            window=window,
            heldout=heldout,
            floor=None if estimator else chosen.floor,
            contrasts=() if estimator else chosen.contrasts,
            train=not report_only,
            keep_dir=keep_dir,
        )
    except ParaAgentError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    typer.echo((output_dir / "ablation.md").read_text(encoding="utf-8"), nl=False)
    typer.echo(f"written to {output_dir}/ablation.{{json,md,png}}")


@rl_app.command()
def probe(
    episodes: Annotated[
        Path, typer.Option(help="Held-out episodes of an ablation (start/heldout.jsonl).")
    ],
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="RLConfig YAML/JSON of that ablation.")
    ] = None,
    adapter: Annotated[
        Path | None, typer.Option(help="LoRA adapter to probe instead (sets lora: true).")
    ] = None,
    assignments: SetOption = None,
) -> None:
    """Gradient signal-to-noise of one update on recorded episodes (one group per task)."""
    import json

    from training.experiments.probe import probe_gradient

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        result = probe_gradient(_load(config, assignments, None, adapter), episodes)
    except ParaAgentError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    typer.echo(json.dumps(result, indent=2))
    snr = result.get("grad_snr")
    cosine = result.get("grad_group_cosine")
    typer.echo(
        f"{result['groups']} groups, {result['episodes']} episodes: gradient SNR "
        + ("-" if snr is None else f"{snr:.3f}")
        + ", mean cosine between groups "
        + ("-" if cosine is None else f"{cosine:.3f}")
    )


@rl_app.command()
def pool(
    episodes: Annotated[
        list[str],
        typer.Option(
            help="LABEL=PATH or LABEL=PATH@POLICY: one evaluation's episodes of one policy, "
            "JSON lines, gzipped if PATH ends in .gz (repeat; the same LABEL pools; @POLICY "
            "picks a policy from a train eval file)."
        ),
    ],
    baseline: Annotated[
        str, typer.Option(help="The label every other one is compared to, paired by task.")
    ] = "start",
    out: Annotated[Path | None, options.out("Also write the pooled scores as JSON.")] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Also draw success and facts stated per policy (PNG).")
    ] = None,
) -> None:
    """Pool held-out evaluations per policy; success and facts vs the baseline, paired by task."""
    import json

    from training.experiments.pooled import (
        EpisodeSource,
        plot_pooled,
        pool_evaluations,
        pooled_family_table,
        pooled_table,
    )

    try:
        sources = [EpisodeSource.parse(spec) for spec in episodes]
        pooled = pool_evaluations(sources, baseline=baseline)
    except ParaAgentError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    if out is not None:
        rows = [policy.model_dump(mode="json") for policy in pooled]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    if plot is not None:
        plot_pooled(pooled, plot)
    typer.echo(pooled_table(pooled), nl=False)
    if any(len(policy.by_family) > 1 for policy in pooled):
        typer.echo("\nsuccess per family (episodes), Δ paired by task:\n")
        typer.echo(pooled_family_table(pooled), nl=False)

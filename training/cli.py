"""``paraagent train …``: the training sub-app (the root CLI mounts ``train_app`` as ``train``)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from paraagent_runtime import DEFAULT_MAX_TURNS, DEFAULT_MODE, MODES, ConfigError, ParaAgentError
from paraagent_runtime.cli import options
from paraagent_runtime.intervals import DEFAULT_EVAL_TASKS

from .cli_options import ConfigOption, SetOption, ShowFields

if TYPE_CHECKING:
    from paraagent_runtime import Policy

__all__ = ["train_app"]

train_app = typer.Typer(
    name="train",
    help="Cold-start demonstrations, SFT, RL and their evaluation (configs: training/configs).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
console = Console()


def _fields_table(cls: type) -> Table:
    from .config import describe_fields

    table = Table("field", "default", "help", title=cls.__name__)
    for name, default, text in describe_fields(cls):
        table.add_row(name, default, text)
    return table


def _fail(exc: ParaAgentError) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(code=2)


@train_app.command("demos")
def demos_command(
    config: ConfigOption = None,
    output_dir: Annotated[Path | None, typer.Option(help="Override output_dir.")] = None,
    n_tasks: Annotated[int | None, options.n_tasks("Override n_tasks.")] = None,
    seed: Annotated[int | None, options.seed("Override seed.")] = None,
    assignments: SetOption = None,
    show_fields: ShowFields = False,
) -> None:
    """Build multi-agent demonstrations over ToolEnv tasks, filter, balance, write the card."""
    from .config import load_config
    from .demos import DemoConfig, build_demos
    from .progress import StepProgress

    if show_fields:
        console.print(_fields_table(DemoConfig))
        return
    try:
        demo_config = load_config(
            DemoConfig,
            config,
            assignments=assignments or (),
            output_dir=output_dir,
            n_tasks=n_tasks,
            seed=seed,
        )
        with StepProgress("demos", demo_config.n_tasks, console=console, unit="task") as progress:
            build = asyncio.run(
                build_demos(demo_config, lambda done, _total: progress.advance_to(done))
            )
    except ParaAgentError as exc:
        raise _fail(exc) from exc
    console.print(
        f"kept [bold]{len(build.demos)}[/] of {build.candidates} candidates "
        f"({len(build.rejected)} rejected) → "
        f"{build.demos_path}\ncard: {build.card_path}"
    )


@train_app.command("sft")
def sft_command(
    config: ConfigOption = None,
    demos: Annotated[
        list[Path] | None,
        typer.Option(help="Override the demo JSONL (repeat to train on several demo files)."),
    ] = None,
    output_dir: Annotated[Path | None, typer.Option(help="Override output_dir.")] = None,
    max_steps: Annotated[int | None, typer.Option(min=1, help="Override max_steps.")] = None,
    assignments: SetOption = None,
    show_fields: ShowFields = False,
) -> None:
    """Fine-tune (LoRA) on demonstrations with TRL; resumes from output_dir's last checkpoint."""
    from .config import load_config
    from .sft import SFTRunConfig, train_sft

    if show_fields:
        console.print(_fields_table(SFTRunConfig))
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        sft_config = load_config(
            SFTRunConfig,
            config,
            assignments=assignments or (),
            demos=demos,
            output_dir=output_dir,
            max_steps=max_steps,
        )
        result = train_sft(sft_config, console=console)
    except ParaAgentError as exc:
        raise _fail(exc) from exc
    console.print(
        f"saved [bold]{result.model_dir}[/] ({result.examples} sequences): {result.metrics}"
    )


def _local_policy(spec: str, *, model: str | None, dtype: str) -> tuple[str, Policy]:
    """The label and the policy of a local ``--policy`` spec (``model`` is the base model).

    Raises:
        ConfigError: Not a local spec, or a spec or dtype the backend refuses.
    """
    from paraagent_runtime import policy_from_spec

    backend, _, target = spec.partition(":")
    if backend not in ("local", "paraagent"):
        raise ConfigError(
            f"--policy {spec!r}: train eval runs local models (local[:DIR], paraagent)"
        )
    label = target or ("base" if backend == "local" else backend)
    return label, policy_from_spec(spec, model=model, dtype=dtype)


def _print_row(row: object) -> None:
    console.print(f"  {row!r}", highlight=False)


@train_app.command("eval")
def eval_command(
    policy: Annotated[
        list[str] | None,
        options.policy(
            'Local policy to evaluate (repeatable; default "local", the base model): "local", '
            '"local:ADAPTER_DIR" (a LoRA adapter on the base), "local:MODEL_DIR", "paraagent".'
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Base model directory of the local specs (default: SmolLM2-135M)."),
    ] = None,
    n_tasks: Annotated[int, options.n_tasks("Held-out tasks per split.")] = DEFAULT_EVAL_TASKS,
    seed: Annotated[
        int, options.seed("Task generator seed; also seeds sampling unless --sampling-seed.")
    ] = 0,
    sampling_seed: Annotated[
        int | None,
        typer.Option(
            help="Seed of the sampling draws (--temperature) alone: another draw on the same "
            "tasks (default: --seed)."
        ),
    ] = None,
    split: Annotated[
        list[str] | None,
        typer.Option(
            help="ToolEnv split (repeatable; default test-seen): dev (for choices), test-seen, "
            "test-unseen-tools, test-unseen-categories (for reporting)."
        ),
    ] = None,
    family: Annotated[
        list[str] | None, typer.Option(help="Restrict to these task families (repeatable).")
    ] = None,
    mode: Annotated[
        list[str] | None,
        options.modes(
            f"Agent mode: {', '.join(MODES)} (repeatable: once for every policy, or once "
            f"per --policy in order; default {DEFAULT_MODE})."
        ),
    ] = None,
    max_turns: Annotated[int, options.max_turns("Turns before an episode gives up.")] = (
        DEFAULT_MAX_TURNS
    ),
    max_repeated_turns: Annotated[int, options.max_repeated_turns()] = (
        options.DEFAULT_MAX_REPEATED_TURNS
    ),
    max_tokens: Annotated[int, options.max_tokens("Tokens per model turn.")] = 192,
    temperature: Annotated[float, options.temperature("Sampling temperature (0 = greedy).")] = 0.0,
    samples: Annotated[
        int,
        typer.Option(min=1, help="Episodes per task (more than 1 needs --temperature above 0)."),
    ] = 1,
    trajectory: Annotated[Path | None, typer.Option(help="JSONL file for the episodes.")] = None,
    out: Annotated[
        Path | None,
        options.out("Write the summaries as JSON here (and a .md table)."),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(min=1, help="Episodes run at once (their turns share batched generation)."),
    ] = 1,
    dtype: Annotated[
        str,
        typer.Option(
            help="Weights dtype: float32, bfloat16 (as an RL run with `dtype: bfloat16` sampled; "
            "faster on CPUs with AVX512-BF16), float16 or auto."
        ),
    ] = "float32",
) -> None:
    """Evaluate local policies (the base model, adapters) on held-out ToolEnv tasks."""
    import contextlib
    import json

    import torch

    from mcp_servers.toolenv import generate_tasks
    from paraagent_runtime import SPLITS, TrajectoryWriter

    from .evaluate import (
        SUMMARY_COLUMNS,
        check_eval_decoding,
        evaluate_policy,
        summaries_markdown,
        summary_cells,
    )

    splits = split or ["test-seen"]
    results: list[dict[str, object]] = []
    try:
        check_eval_decoding(samples, temperature, owner="--samples/--temperature")
        unknown = [name for name in splits if name not in SPLITS]
        if unknown:
            raise ConfigError(f"--split: unknown {', '.join(unknown)}; use {', '.join(SPLITS)}")
        task_sets = {
            name: generate_tasks(n_tasks, seed=seed, split=name, families=family) for name in splits
        }
        policies = policy or ["local"]
        modes = mode or [DEFAULT_MODE]
        if len(modes) not in (1, len(policies)):
            raise ConfigError(
                f"--mode: give one mode for every policy or one per --policy ({len(policies)}), "
                f"got {len(modes)}"
            )
        unknown_modes = sorted(set(modes) - set(MODES))
        if unknown_modes:
            raise ConfigError(f"--mode: unknown {', '.join(unknown_modes)}; use {', '.join(MODES)}")
        policy_modes = modes * len(policies) if len(modes) == 1 else modes
        with TrajectoryWriter(trajectory) if trajectory else contextlib.nullcontext() as writer:
            for spec, agent_mode in zip(policies, policy_modes, strict=True):
                label, evaluated = _local_policy(spec, model=model, dtype=dtype)
                # Every model draws its samples from the same stream.
                torch.manual_seed(seed if sampling_seed is None else sampling_seed)
                for name, tasks in task_sets.items():
                    summary, _ = asyncio.run(
                        evaluate_policy(
                            evaluated, tasks, model=label, mode=agent_mode, max_turns=max_turns,
                            max_repeated_turns=max_repeated_turns, max_tokens=max_tokens,
                            temperature=temperature, samples=samples,
                            trajectory=writer,
                            on_row=_print_row,
                            concurrency=concurrency,
                        )
                    )  # fmt: skip
                    results.append({"split": name, **summary.model_dump()})
    except ParaAgentError as exc:
        raise _fail(exc) from exc
    from paraagent_runtime.report import readable_table

    rows = [summary_cells(row) for row in results]
    console.print(readable_table(console, SUMMARY_COLUMNS, rows))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        out.with_suffix(".md").write_text(summaries_markdown(results), encoding="utf-8")
        console.print(f"written to {out} and {out.with_suffix('.md')}")


@train_app.command("table")
def table_command(
    policies: Annotated[
        list[str],
        typer.Argument(
            metavar="NAME=FILE...",
            help="A policy's evaluation file (eval toolenv --summary JSON or train eval --out "
            "JSON); repeat a name for its other splits' files.",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        str, typer.Option(help="The policy every other one is paired against, by task.")
    ],
    out: Annotated[Path | None, options.out("Write STEM.md and STEM.json here.")] = None,
) -> None:
    """One table of several policies over the ToolEnv splits, beside a baseline (no evaluation).

    Success with Wilson intervals, format-error turns per episode, the hidden-need families
    pooled, and each policy minus the baseline paired by task (bootstrap intervals).
    """
    from .experiments.policy_table import policy_table, write_policy_table

    files: dict[str, list[Path]] = {}
    try:
        for item in policies:
            name, separator, path = item.partition("=")
            if not separator or not name or not path:
                raise ConfigError(f"{item!r}: give each evaluation file as NAME=FILE")
            files.setdefault(name, []).append(Path(path))
        table = policy_table(files, baseline=baseline)
    except ParaAgentError as exc:
        raise _fail(exc) from exc
    typer.echo(table.markdown())
    if out is not None:
        for path in write_policy_table(table, out):
            console.print(f"written to {path}", highlight=False)


def _mount_stages() -> None:
    """Attach the later training stages' sub-apps (their heavy imports stay inside the commands)."""
    from .rl.cli import rl_app

    train_app.add_typer(rl_app, name="rl", help="RL with multi-level advantage decoupling.")


_mount_stages()

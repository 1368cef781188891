"""``paraagent train …``: the training sub-app (mounted by the lead as ``app.add_typer(train_app, name="train")``)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from paraagent_runtime.errors import ParaAgentError

__all__ = ["train_app"]

train_app = typer.Typer(
    name="train",
    help="Cold-start demonstrations and SFT (configs: training/configs/*.yaml).",
    no_args_is_help=True,
)
console = Console()

ConfigOption = Annotated[Path | None, typer.Option("--config", "-c", help="YAML/JSON config file (fields: --show-fields).")]
ShowFields = Annotated[bool, typer.Option("--show-fields", help="List the config fields with defaults and help, then exit.")]


def _fields_table(cls: type) -> Table:
    from .config import describe_fields

    table = Table("field", "default", "help", title=cls.__name__)
    for name, default, text in describe_fields(cls):
        table.add_row(name, default, text)
    return table


def _fail(exc: ParaAgentError) -> typer.Exit:
    console.print(f"[red]error:[/] {exc}")
    return typer.Exit(code=2)


@train_app.command("demos")
def demos_command(
    config: ConfigOption = None,
    output_dir: Annotated[Path | None, typer.Option(help="Override output_dir.")] = None,
    n_tasks: Annotated[int | None, typer.Option(help="Override n_tasks.")] = None,
    seed: Annotated[int | None, typer.Option(help="Override seed.")] = None,
    show_fields: ShowFields = False,
) -> None:
    """Build multi-agent demonstrations over ToolEnv tasks, filter and balance them, write the card."""
    from rich.progress import Progress

    from .config import load_config
    from .demos import DemoConfig, build_demos

    if show_fields:
        console.print(_fields_table(DemoConfig))
        return
    try:
        demo_config = load_config(DemoConfig, config, output_dir=output_dir, n_tasks=n_tasks, seed=seed)
        with Progress(console=console) as progress:
            bar = progress.add_task("demonstrating", total=demo_config.n_tasks)
            build = asyncio.run(build_demos(demo_config, lambda done, total: progress.update(bar, completed=done)))
    except ParaAgentError as exc:
        raise _fail(exc) from exc
    console.print(
        f"kept [bold]{len(build.demos)}[/] of {build.candidates} candidates ({len(build.rejected)} rejected) → "
        f"{build.demos_path}\ncard: {build.card_path}"
    )


@train_app.command("sft")
def sft_command(
    config: ConfigOption = None,
    demos: Annotated[Path | None, typer.Option(help="Override the demo JSONL.")] = None,
    output_dir: Annotated[Path | None, typer.Option(help="Override output_dir.")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Override max_steps.")] = None,
    show_fields: ShowFields = False,
) -> None:
    """Fine-tune (LoRA) on demonstrations with TRL; resumes from the last checkpoint in output_dir."""
    from .config import load_config
    from .sft import SFTRunConfig, train_sft

    if show_fields:
        console.print(_fields_table(SFTRunConfig))
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        sft_config = load_config(SFTRunConfig, config, demos=demos, output_dir=output_dir, max_steps=max_steps)
        result = train_sft(sft_config, console=console)
    except ParaAgentError as exc:
        raise _fail(exc) from exc
    console.print(f"saved [bold]{result.model_dir}[/] ({result.examples} sequences): {result.metrics}")

"""The retriever training command: ``python -m training.retriever`` (a standalone typer app)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer

from paraagent_runtime import ConfigError

from ..config import load_config
from .config import RetrieverTrainConfig

__all__ = ["main", "train_retriever_command"]


def train_retriever_command(
    config: Annotated[
        Path | None, typer.Option("--config", help="A YAML/JSON RetrieverTrainConfig file.")
    ] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option("--set", help="FIELD=VALUE override of a config field (repeatable)."),
    ] = None,
) -> None:
    """Fine-tune the bundled embedder on the ToolEnv catalog (LoRA, on CPU)."""
    from .train import train_retriever

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        settings = load_config(RetrieverTrainConfig, config, assignments=assignments or ())
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    run = train_retriever(settings)
    brief = {key: run.summary[key] for key in ("tools", "pairs", "steps", "loss_last", "seconds")}
    typer.echo(f"wrote {run.output_dir}: {json.dumps(brief)}")


def main() -> None:
    """Run :func:`train_retriever_command` as a program."""
    typer.run(train_retriever_command)

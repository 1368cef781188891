"""Command-line options shared by the `paraagent train …` commands (typer `Annotated` types)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["ConfigOption", "SetOption", "ShowFields"]

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="YAML/JSON config file (fields: --show-fields)."),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="FIELD=VALUE",
        help="Override a config field (repeatable; VALUE is YAML; dotted for nested: "
        "advantage.alpha=2). Named options win over it.",
    ),
]
ShowFields = Annotated[
    bool,
    typer.Option("--show-fields", help="List the config fields with defaults and help, then exit."),
]

"""``paraagent toolenv``: ``catalog build``, ``stats`` and ``serve`` (a typer sub-app)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from paraagent_runtime import ConfigError
from paraagent_runtime.cli import options

from ..serve import DEFAULT_PAGE_SIZE, CatalogChoice, Transport

__all__ = ["catalog_app", "parse_source_options", "toolenv_app"]

toolenv_app = typer.Typer(
    help="ToolEnv: the simulated tool catalog.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
catalog_app = typer.Typer(help="Build the catalog of real tool interfaces.", no_args_is_help=True)
toolenv_app.add_typer(catalog_app, name="catalog")

SourceOption = Annotated[
    list[str] | None,
    typer.Option("--source", "-s", help="NAME=PATH; repeat. Overrides or adds to the defaults."),
]
OnlyOption = Annotated[
    bool, typer.Option("--only", help="Use only the --source entries, not the default sources.")
]


def parse_source_options(options: list[str] | None, *, only: bool = False) -> dict[str, Path]:
    """Turn ``NAME=PATH`` options into a sources mapping (on top of the defaults unless ``only``).

    Raises:
        ConfigError: an option without ``=``.
    """
    from .build import default_sources

    sources = {} if only else default_sources()
    for option in options or []:
        name, sep, path = option.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--source expects NAME=PATH, got {option!r}")
        sources[name.strip()] = Path(path).expanduser()
    return sources


@toolenv_app.command("serve")
def serve_command(
    transport: Annotated[
        Transport, typer.Option(help="stdio (for MCP clients that spawn it) or http.")
    ] = Transport.stdio,
    catalog: Annotated[
        CatalogChoice, typer.Option(help="builtin (69 tools) or full (the real catalog).")
    ] = CatalogChoice.builtin,
    gateway: Annotated[
        bool,
        typer.Option("--gateway", help="Serve search_tools + call_tool instead of every tool."),
    ] = False,
    seed: Annotated[int, options.seed("World seed.")] = 0,
    host: Annotated[str, typer.Option(help="HTTP host.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 8765,
    page_size: Annotated[int, typer.Option(help="Tools per tools/list page.")] = DEFAULT_PAGE_SIZE,
) -> None:
    """Serve the ToolEnv catalog over MCP: plain paged tools or a search/call gateway."""
    from ..serve import serve_catalog

    if page_size < 1:
        raise typer.BadParameter(f"must be at least 1, got {page_size}", param_hint="--page-size")
    serve_catalog(
        catalog,
        transport=transport,
        gateway=gateway,
        seed=seed,
        host=host,
        port=port,
        page_size=page_size,
    )


@catalog_app.command("build")
def build_command(
    source: SourceOption = None,
    only: OnlyOption = False,
    out: Annotated[Path | None, options.out("Write here instead of the cache.")] = None,
) -> None:
    """Import every source and store the catalog compactly in the cache."""
    from .build import build_catalog
    from .store import catalog_path, save_catalog

    console = Console(stderr=True)
    sources = parse_source_options(source, only=only)
    started = time.perf_counter()
    catalog = build_catalog(sources, progress=True)
    built = time.perf_counter() - started
    path = save_catalog(catalog, out or catalog_path(catalog.fingerprint))
    console.print(
        f"{len(catalog):,} tools ({catalog.real_count:,} real) in {built:.1f} s -> {path} "
        f"({path.stat().st_size / 1e6:.1f} MB)"
    )


@toolenv_app.command("stats")
def stats_command(
    source: SourceOption = None,
    only: OnlyOption = False,
    catalog_file: Annotated[Path | None, typer.Option("--catalog", help="A catalog file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Counts by source, provider and category, and the share of typed schemas."""
    from .build import load_catalog
    from .stats import catalog_stats, stats_tables

    started = time.perf_counter()
    sources = None if catalog_file else parse_source_options(source, only=only)
    catalog = load_catalog(catalog_file, sources=sources, progress=True)
    loaded = time.perf_counter() - started
    stats = catalog_stats(catalog)
    console = Console()
    if as_json:
        console.print_json(json.dumps({**stats.to_json(), "load_seconds": round(loaded, 2)}))
        return
    for table in stats_tables(stats):
        console.print(table)
    console.print(f"loaded in {loaded:.1f} s")

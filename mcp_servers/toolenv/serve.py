"""``paraagent toolenv serve``: the ToolEnv catalog over MCP (stdio or streamable HTTP).

``--catalog builtin`` serves the 69 built-in tools; ``--catalog full`` adds every record of the
cached real catalog (built on first use). ``--gateway`` exposes ``search_tools`` + ``call_tool``
instead of the (paged) tool list.
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Annotated

import anyio
import typer

from paraagent_runtime import ConfigError

from .builtin import builtin_records
from .records import ToolRecord
from .server import DEFAULT_PAGE_SIZE, build_server
from .source import ToolEnv

__all__ = ["CatalogChoice", "Transport", "catalog_records", "serve_command"]

logger = logging.getLogger(__name__)


class Transport(str, Enum):  # noqa: UP042 - StrEnum changes str()/format()
    """MCP transports the server speaks."""

    stdio = "stdio"
    http = "http"


class CatalogChoice(str, Enum):  # noqa: UP042 - StrEnum changes str()/format()
    """Which catalog to serve."""

    builtin = "builtin"
    full = "full"


def catalog_records(choice: CatalogChoice | str) -> list[ToolRecord]:
    """The records of ``choice``: the built-in catalog, or it followed by the cached real catalog.

    Raises:
        ConfigError: an unknown choice.
    """
    value = choice.value if isinstance(choice, CatalogChoice) else choice
    if value == CatalogChoice.builtin.value:
        return builtin_records()
    if value != CatalogChoice.full.value:
        raise ConfigError(f"--catalog: unknown catalog {value!r} (use builtin or full)")
    from .catalog import load_catalog

    records = builtin_records()
    seen = {record.id for record in records}
    records.extend(record for record in load_catalog(progress=True) if record.id not in seen)
    return records


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
    seed: Annotated[int, typer.Option(help="World seed.")] = 0,
    host: Annotated[str, typer.Option(help="HTTP host.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    page_size: Annotated[int, typer.Option(help="Tools per tools/list page.")] = DEFAULT_PAGE_SIZE,
) -> None:
    """Serve the ToolEnv catalog over MCP: plain paged tools or a search/call gateway."""
    if page_size < 1:
        raise typer.BadParameter(f"must be at least 1, got {page_size}", param_hint="--page-size")
    env = ToolEnv(catalog_records(catalog), seed=seed)
    server = build_server(env, page_size=page_size, gateway=gateway)
    logger.info("serving %d ToolEnv tools over %s", len(env.records), transport.value)
    if transport is Transport.stdio:
        anyio.run(server.run_stdio_async)
    else:
        anyio.run(lambda: server.run_streamable_http_async(host=host, port=port))

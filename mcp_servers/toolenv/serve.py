"""The ToolEnv catalog served over MCP (stdio or streamable HTTP): :func:`serve_catalog`.

The ``builtin`` catalog is the 69 built-in tools; ``full`` adds every record of the cached real
catalog (built on first use). ``gateway`` exposes ``search_tools`` + ``call_tool`` instead of the
(paged) tool list. The command ``paraagent toolenv serve`` lives in :mod:`.catalog.cli`.
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import TYPE_CHECKING

import anyio

from paraagent_runtime import ConfigError

if TYPE_CHECKING:
    from .records import ToolRecord


__all__ = ["DEFAULT_PAGE_SIZE", "CatalogChoice", "Transport", "catalog_records", "serve_catalog"]

DEFAULT_PAGE_SIZE = 500
"""Tools per ``tools/list`` page unless told otherwise."""

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
    from .builtin import builtin_records

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


def serve_catalog(
    catalog: CatalogChoice | str = CatalogChoice.builtin,
    *,
    transport: Transport = Transport.stdio,
    gateway: bool = False,
    seed: int = 0,
    host: str = "127.0.0.1",
    port: int = 8765,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> None:
    """Serve a ToolEnv catalog over MCP until the transport closes.

    Args:
        catalog: ``builtin`` (69 tools) or ``full`` (the real catalog too).
        transport: stdio (for MCP clients that spawn it) or streamable HTTP.
        gateway: Serve ``search_tools`` + ``call_tool`` instead of every tool.
        seed: The world seed of the simulated tools.
        host: The HTTP bind address.
        port: The HTTP port.
        page_size: Tools per ``tools/list`` page.

    Raises:
        ConfigError: An unknown catalog or a page size under 1.
    """
    if page_size < 1:
        raise ConfigError(f"page_size must be at least 1, got {page_size}")
    from .server import build_server
    from .source import ToolEnv

    env = ToolEnv(catalog_records(catalog), seed=seed)
    server = build_server(env, page_size=page_size, gateway=gateway)
    logger.info("serving %d ToolEnv tools over %s", len(env.records), transport.value)
    if transport is Transport.stdio:
        anyio.run(server.run_stdio_async)
    else:
        anyio.run(lambda: server.run_streamable_http_async(host=host, port=port))

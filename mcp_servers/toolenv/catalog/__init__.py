"""The ToolEnv catalog at scale: real tool interfaces normalized into :class:`ToolRecord`.

Sources: AWS service models (botocore), Google discovery documents (google-api-python-client),
and the shared data folder (TOUCAN MCP servers, the OpenAPI directory, StableToolBench,
Seal-Tools). ``build_catalog`` imports them, ``load_catalog`` reads the cached build in seconds,
``catalog_stats`` summarizes it; ``toolenv_app`` (in ``.cli``) is the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paraagent_runtime.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .build import IMPORTERS, build_catalog, default_sources, load_catalog, resolve_sources
    from .model import SYNTHETIC_QUALITY, Catalog, SourceReport
    from .stabletoolbench_source import stabletoolbench_tool_id
    from .stats import CatalogStats, catalog_stats, is_typed
    from .store import CatalogFileError, cache_dir, read_catalog, save_catalog

__all__ = [
    "IMPORTERS",
    "SYNTHETIC_QUALITY",
    "Catalog",
    "CatalogFileError",
    "CatalogStats",
    "SourceReport",
    "build_catalog",
    "cache_dir",
    "catalog_stats",
    "default_sources",
    "is_typed",
    "load_catalog",
    "read_catalog",
    "resolve_sources",
    "save_catalog",
    "stabletoolbench_tool_id",
]

_WHERE: dict[str, str] = {
    "Catalog": "model",
    "CatalogFileError": "store",
    "CatalogStats": "stats",
    "IMPORTERS": "build",
    "SYNTHETIC_QUALITY": "model",
    "SourceReport": "model",
    "build_catalog": "build",
    "cache_dir": "store",
    "catalog_stats": "stats",
    "default_sources": "build",
    "is_typed": "stats",
    "load_catalog": "build",
    "read_catalog": "store",
    "resolve_sources": "build",
    "save_catalog": "store",
    "stabletoolbench_tool_id": "stabletoolbench_source",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)

"""The standard MCP server configuration file, parsed into typed models.

Accepted shapes (the union of what MCP hosts write)::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}      # Claude, Cursor
    {"servers": {"docs": {"type": "http", "url": "https://example.com/mcp"}}}      # VS Code

``type`` is inferred when absent (``command`` -> stdio, ``url`` -> http, a url ending in ``/sse``
-> sse). Every string may reference the environment as ``${VAR}`` or ``${VAR:-default}``. A file
that cannot be used raises :class:`~paraagent_runtime.errors.ConfigError` with one line naming
the file and the field, e.g. ``mcp.json: mcpServers.time.command: field required``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError

__all__ = [
    "MCPConfig",
    "MCPServerConfig",
    "TransportType",
    "expand_variables",
    "load_mcp_config",
    "parse_mcp_config",
]

TransportType = Literal["stdio", "http", "sse", "memory"]

_TYPE_ALIASES: dict[str, TransportType] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MCPServerConfig(BaseModel):
    """How to reach one MCP server, and which of its tools to expose.

    ``timeout`` bounds each call and ``connect_timeout`` the start and handshake, in seconds.
    ``allowed_tools`` and ``excluded_tools`` take tool names or shell-style patterns (``git_*``).
    ``type="memory"`` is only built in code, for an ``MCPServer`` object handed to
    :class:`~paraagent_runtime.mcp.source.MCPToolSource`.
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    type: TransportType
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    bearer_token: str | None = Field(default=None, alias="bearerToken")
    timeout: float = Field(default=30.0, gt=0)
    connect_timeout: float = Field(default=30.0, gt=0, alias="connectTimeout")
    enabled: bool = True
    allowed_tools: list[str] | None = Field(default=None, alias="allowedTools")
    excluded_tools: list[str] = Field(default_factory=list, alias="excludedTools")
    protocol: Literal["auto", "legacy"] = "auto"

    def exposes(self, tool: str) -> bool:
        """Whether ``tool`` passes the ``allowedTools`` / ``excludedTools`` filters."""
        if self.allowed_tools is not None and not _matches_any(tool, self.allowed_tools):
            return False
        return not _matches_any(tool, self.excluded_tools)

    def http_headers(self) -> dict[str, str]:
        """The headers of an HTTP/SSE connection, with the bearer token as ``Authorization``."""
        headers = dict(self.headers)
        if self.bearer_token:
            headers["Authorization"] = f"Bearer {self.bearer_token}"
        return headers


class MCPConfig(BaseModel):
    """All servers of one configuration file, by name (in file order)."""

    model_config = ConfigDict(frozen=True)

    servers: dict[str, MCPServerConfig] = Field(default_factory=dict)

    def enabled(self) -> dict[str, MCPServerConfig]:
        """The servers not switched off with ``"enabled": false`` / ``"disabled": true``."""
        return {name: server for name, server in self.servers.items() if server.enabled}


def _matches_any(tool: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(tool, pattern) for pattern in patterns)


def expand_variables(value: str, environ: Mapping[str, str], *, where: str) -> str:
    """Replace ``${VAR}`` and ``${VAR:-default}`` in ``value``.

    Args:
        value: The string to expand.
        environ: The variables available.
        where: The field path, for the error message.

    Raises:
        ConfigError: A variable without default is not set.
    """

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(
            f"{where}: undefined variable ${{{name}}} (set it or use ${{{name}:-default}})"
        )

    return _VARIABLE.sub(replace, value)


def _expand_tree(value: Any, environ: Mapping[str, str], where: str) -> Any:
    if isinstance(value, str):
        return expand_variables(value, environ, where=where)
    if isinstance(value, list):
        return [_expand_tree(item, environ, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        return {key: _expand_tree(item, environ, f"{where}.{key}") for key, item in value.items()}
    return value


def _infer_type(raw: Mapping[str, Any], where: str) -> TransportType:
    declared = raw.get("type", raw.get("transport"))
    if declared is not None:
        if not isinstance(declared, str) or declared.lower() not in _TYPE_ALIASES:
            raise ConfigError(
                f"{where}.type: unknown transport {declared!r} (expected stdio, http or sse)"
            )
        return _TYPE_ALIASES[declared.lower()]
    if "command" in raw:
        return "stdio"
    if "url" in raw:
        url = str(raw["url"]).rstrip("/")
        return "sse" if url.endswith("/sse") else "http"
    raise ConfigError(f"{where}.command: field required (or give a 'url' for an HTTP server)")


def _parse_server(name: str, raw: Any, environ: Mapping[str, str], where: str) -> MCPServerConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object, got {type(raw).__name__}")
    if not name or "/" in name:
        raise ConfigError(f"{where}: server names must be non-empty and contain no '/'")
    expanded: dict[str, Any] = _expand_tree(raw, environ, where)
    transport = _infer_type(expanded, where)
    required = "command" if transport == "stdio" else "url"
    if not expanded.get(required):
        raise ConfigError(f"{where}.{required}: field required for a {transport} server")
    if "disabled" in expanded and "enabled" not in expanded:
        expanded["enabled"] = not bool(expanded["disabled"])
    expanded["type"] = transport
    try:
        return MCPServerConfig.model_validate(expanded)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        message = error["msg"][0].lower() + error["msg"][1:]
        raise ConfigError(f"{where}.{field}: {message}") from exc


def parse_mcp_config(
    data: Any, *, origin: str = "mcp.json", environ: Mapping[str, str] | None = None
) -> MCPConfig:
    """Validate an already-decoded configuration object.

    Args:
        data: The decoded JSON document.
        origin: The file name used as the prefix of error messages.
        environ: Variables for ``${VAR}`` expansion; defaults to ``os.environ``.

    Raises:
        ConfigError: The document is not a usable MCP configuration.
    """
    env = os.environ if environ is None else environ
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: expected a JSON object at the top level")
    key = "mcpServers" if "mcpServers" in data else "servers" if "servers" in data else None
    if key is None:
        raise ConfigError(f"{origin}: mcpServers: field required (or VS Code's 'servers')")
    entries = data[key]
    if not isinstance(entries, dict):
        raise ConfigError(f"{origin}: {key}: expected an object mapping names to servers")
    servers = {
        name: _parse_server(name, raw, env, f"{origin}: {key}.{name}")
        for name, raw in entries.items()
    }
    return MCPConfig(servers=servers)


def load_mcp_config(path: str | Path, *, environ: Mapping[str, str] | None = None) -> MCPConfig:
    """Read and validate an MCP configuration file.

    Args:
        path: The JSON file (``mcp.json``, ``.mcp.json``, ``claude_desktop_config.json``, ...).
        environ: Variables for ``${VAR}`` expansion; defaults to ``os.environ``.

    Raises:
        ConfigError: The file is missing, is not JSON, or is not a usable configuration.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{file.name}: cannot read {file}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{file.name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    return parse_mcp_config(data, origin=file.name, environ=environ)

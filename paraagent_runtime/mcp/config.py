"""The standard MCP server configuration file, parsed into typed models.

Accepted shapes (the union of what MCP hosts write)::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}      # Claude, Cursor
    {"servers": {"docs": {"type": "http", "url": "https://example.com/mcp"}}}      # VS Code

``type`` is inferred when absent (``command`` -> stdio, ``url`` -> http, a url ending in ``/sse``
-> sse). A key paraagent does not know is an error with a did-you-mean (``excludedTool`` would
otherwise silently drop a guard), except a few other hosts' keys that change nothing here
(:data:`IGNORED_KEYS`). Two servers with one name (a key repeated, or the same name under
``mcpServers`` and ``servers``) are an error naming both.

Every string may use variables:

- ``${VAR}``, ``${VAR:-default}``, ``${env:VAR}``: the environment (unset without a default is
  an error);
- ``${workspaceFolder}`` (and ``${workspaceFolderBasename}``): the config's workspace, the
  folder holding ``.vscode/`` for a ``.vscode/mcp.json``, else the folder of the config file;
- ``${userHome}``, ``${pathSeparator}`` (``${/}``);
- ``${input:ID}`` is an error: paraagent has no prompt for VS Code's ``inputs``.

A leading ``~`` expands to the home folder in ``command``, ``args`` and ``cwd``. A file that
cannot be used raises :class:`~paraagent_runtime.errors.ConfigError` with one line naming the
file and the field, e.g. ``mcp.json: mcpServers.time.command: field required``.
"""

from __future__ import annotations

import difflib
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
    "IGNORED_KEYS",
    "MCPConfig",
    "MCPServerConfig",
    "TransportType",
    "config_workspace",
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
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ENV_VARIABLE = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)

IGNORED_KEYS: frozenset[str] = frozenset(
    {"description", "dev", "gallery", "autoApprove", "alwaysAllow"}
)
"""Other hosts' server keys that change neither what runs nor what is exposed: accepted, unused.

(VS Code's ``dev`` and ``gallery``, Cline's approval lists; paraagent asks before destructive
calls in ``chat`` whatever they say.)"""

_FILE_ONLY_KEYS = ("transport", "disabled")
_UNSUPPORTED_KEYS = {
    "envFile": 'not supported (list the variables under \'env\', e.g. "K": "${env:K}")',
}


class MCPServerConfig(BaseModel):
    """How to reach one MCP server, and which of its tools to expose.

    ``timeout`` bounds each call and ``connect_timeout`` the start and handshake, in seconds.
    ``allowed_tools`` and ``excluded_tools`` take tool names or shell-style patterns (``git_*``).
    ``type="memory"`` is only built in code, for an ``MCPServer`` object handed to
    :class:`~paraagent_runtime.mcp.source.MCPToolSource`.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

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


def expand_variables(
    value: str, environ: Mapping[str, str], *, where: str, workspace: Path | None = None
) -> str:
    """Replace the variables of ``value`` (see the module docstring for the list).

    Args:
        value: The string to expand.
        environ: The variables available to ``${VAR}`` and ``${env:VAR}``.
        where: The field path, for the error message.
        workspace: What ``${workspaceFolder}`` means (the config's workspace), if known.

    Raises:
        ConfigError: A variable without default is not set, asks for input, or is unknown.
    """

    def replace(match: re.Match[str]) -> str:
        body = match.group(1)
        if body in ("workspaceFolder", "workspaceFolderBasename"):
            if workspace is None:
                raise ConfigError(f"{where}: ${{{body}}} needs a config file (its workspace)")
            return str(workspace) if body == "workspaceFolder" else workspace.name
        if body == "userHome":
            return str(Path.home())
        if body in ("pathSeparator", "/"):
            return os.sep
        if body.startswith("input:"):
            raise ConfigError(
                f"{where}: ${{{body}}} asks the user for a value, which paraagent cannot do: "
                f"use ${{env:NAME}} and set NAME instead"
            )
        variable = _ENV_VARIABLE.fullmatch(body)
        if variable is None:
            raise ConfigError(f"{where}: unsupported variable ${{{body}}}")
        name, default = variable.group(1), variable.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(
            f"{where}: undefined variable ${{{body}}} (set {name} or use ${{{name}:-default}})"
        )

    return _VARIABLE.sub(replace, value)


def _expand_tree(value: Any, environ: Mapping[str, str], where: str, workspace: Path | None) -> Any:
    if isinstance(value, str):
        return expand_variables(value, environ, where=where, workspace=workspace)
    if isinstance(value, list):
        return [
            _expand_tree(item, environ, f"{where}[{i}]", workspace) for i, item in enumerate(value)
        ]
    if isinstance(value, dict):
        return {
            key: _expand_tree(item, environ, f"{where}.{key}", workspace)
            for key, item in value.items()
        }
    return value


def _expand_home(raw: dict[str, Any]) -> None:
    """Expand a leading ``~`` in ``command``, ``args`` and ``cwd`` (as a shell would)."""
    for key in ("command", "cwd"):
        if isinstance(raw.get(key), str):
            raw[key] = os.path.expanduser(raw[key])
    if isinstance(raw.get("args"), list):
        raw["args"] = [
            os.path.expanduser(arg) if isinstance(arg, str) else arg for arg in raw["args"]
        ]


def _known_keys() -> list[str]:
    keys = set(_FILE_ONLY_KEYS)
    for name, field in MCPServerConfig.model_fields.items():
        keys.add(field.alias or name)
    return sorted(keys)


def _check_keys(raw: Mapping[str, Any], where: str) -> None:
    known = _known_keys()
    for key in raw:
        if key in _UNSUPPORTED_KEYS:
            raise ConfigError(f"{where}.{key}: {_UNSUPPORTED_KEYS[key]}")
        if key in known or key in IGNORED_KEYS or key in MCPServerConfig.model_fields:
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(known)}"
        raise ConfigError(f"{where}.{key}: unknown key ({hint})")


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


def _parse_server(
    name: str, raw: Any, environ: Mapping[str, str], where: str, workspace: Path | None
) -> MCPServerConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object, got {type(raw).__name__}")
    if not name or "/" in name:
        raise ConfigError(f"{where}: server names must be non-empty and contain no '/'")
    _check_keys(raw, where)
    expanded: dict[str, Any] = {
        key: _expand_tree(value, environ, f"{where}.{key}", workspace)
        for key, value in raw.items()
        if key not in IGNORED_KEYS
    }
    _expand_home(expanded)
    transport = _infer_type(expanded, where)
    expanded.pop("transport", None)
    required = "command" if transport == "stdio" else "url"
    if not expanded.get(required):
        raise ConfigError(f"{where}.{required}: field required for a {transport} server")
    disabled = expanded.pop("disabled", None)
    if disabled is not None and "enabled" not in expanded:
        expanded["enabled"] = not bool(disabled)
    expanded["type"] = transport
    try:
        return MCPServerConfig.model_validate(expanded)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        message = error["msg"][0].lower() + error["msg"][1:]
        raise ConfigError(f"{where}.{field}: {message}") from exc


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as decoded, repeated keys kept (so two servers with one name are seen)."""


def _server_entries(data: Mapping[str, Any], origin: str) -> list[tuple[str, str, Any]]:
    """``(section, name, raw)`` of every server, in file order; one name twice is an error."""
    entries: list[tuple[str, str, Any]] = []
    seen: dict[str, str] = {}
    for section in ("mcpServers", "servers"):
        if section not in data:
            continue
        block = data[section]
        if not isinstance(block, dict | _Pairs):
            raise ConfigError(f"{origin}: {section}: expected an object mapping names to servers")
        for name, raw in block.items() if isinstance(block, dict) else block:
            where = f"{section}.{name}"
            if name in seen:
                raise ConfigError(
                    f"{origin}: {seen[name]} and {where}: two servers are both named {name!r} "
                    "(names must be unique)"
                )
            seen[name] = where
            entries.append((section, name, raw))
    return entries


def _plain(value: Any) -> Any:
    """A decoded value with its :class:`_Pairs` turned into dicts (the last repeat wins)."""
    if isinstance(value, _Pairs):
        return {key: _plain(item) for key, item in value}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def parse_mcp_config(
    data: Any,
    *,
    origin: str = "mcp.json",
    environ: Mapping[str, str] | None = None,
    workspace: Path | None = None,
) -> MCPConfig:
    """Validate an already-decoded configuration object.

    Args:
        data: The decoded JSON document.
        origin: The file name used as the prefix of error messages.
        environ: Variables for ``${VAR}`` expansion; defaults to ``os.environ``.
        workspace: What ``${workspaceFolder}`` expands to; unset, the variable is an error.

    Raises:
        ConfigError: The document is not a usable MCP configuration.
    """
    env = os.environ if environ is None else environ
    if isinstance(data, _Pairs):
        data = {key: value for key, value in data}
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: expected a JSON object at the top level")
    if "mcpServers" not in data and "servers" not in data:
        raise ConfigError(f"{origin}: mcpServers: field required (or VS Code's 'servers')")
    servers = {
        name: _parse_server(name, _plain(raw), env, f"{origin}: {section}.{name}", workspace)
        for section, name, raw in _server_entries(data, origin)
    }
    return MCPConfig(servers=servers)


def config_workspace(path: Path) -> Path:
    """The workspace of a config file: what ``${workspaceFolder}`` means in it.

    The folder holding ``.vscode/`` for ``<folder>/.vscode/mcp.json``, else the file's folder.
    """
    folder = path.expanduser().resolve().parent
    return folder.parent if folder.name == ".vscode" else folder


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
        data = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{file.name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    return parse_mcp_config(
        data, origin=file.name, environ=environ, workspace=config_workspace(file)
    )

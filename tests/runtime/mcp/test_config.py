"""The MCP configuration file: shapes, inference, variables, filters and one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from paraagent_runtime.errors import ConfigError
from paraagent_runtime.mcp import (
    MCPServerConfig,
    load_mcp_config,
    load_mcp_sources,
    parse_mcp_config,
)

from .conftest import HERE


def write(tmp_path: Path, data: object, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_claude_desktop_shape_infers_types(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "docs": {"url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
                "legacy": {"url": "https://example.com/sse/"},
            }
        },
    )
    config = load_mcp_config(path)
    assert list(config.servers) == ["time", "docs", "legacy"]
    assert config.servers["time"].type == "stdio"
    assert config.servers["time"].args == ["mcp-server-time"]
    assert config.servers["time"].env == {"TZ": "UTC"}
    assert config.servers["docs"].type == "http"
    assert config.servers["legacy"].type == "sse"


def test_vscode_servers_key_and_type_aliases() -> None:
    config = parse_mcp_config(
        {
            "servers": {
                "a": {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"},
                "b": {"type": "stdio", "command": "python"},
            },
            "inputs": [],
        }
    )
    assert config.servers["a"].type == "http"
    assert config.servers["b"].type == "stdio"


def test_per_server_options() -> None:
    config = parse_mcp_config(
        {
            "mcpServers": {
                "git": {
                    "command": "git-mcp",
                    "timeout": 5,
                    "allowedTools": ["git_*"],
                    "excludedTools": ["git_reset"],
                    "enabled": False,
                },
                "off": {"command": "x", "disabled": True},
                "api": {"url": "http://h/mcp", "bearerToken": "s3cret", "headers": {"X": "1"}},
            }
        }
    )
    git = config.servers["git"]
    assert git.timeout == 5
    assert git.exposes("git_status") and not git.exposes("git_reset") and not git.exposes("ls")
    assert config.enabled() == {"api": config.servers["api"]}
    assert config.servers["api"].http_headers() == {"X": "1", "Authorization": "Bearer s3cret"}


def test_variable_expansion_with_defaults() -> None:
    config = parse_mcp_config(
        {
            "mcpServers": {
                "s": {
                    "command": "${BIN}",
                    "args": ["--root", "${ROOT:-/srv}"],
                    "env": {"TOKEN": "${TOKEN}"},
                    "url": "ignored",
                }
            }
        },
        environ={"BIN": "/usr/bin/tool", "TOKEN": "abc"},
    )
    server = config.servers["s"]
    assert (server.command, server.args, server.env) == (
        "/usr/bin/tool",
        ["--root", "/srv"],
        {"TOKEN": "abc"},
    )


def test_unknown_variable_names_the_field() -> None:
    with pytest.raises(ConfigError) as info:
        parse_mcp_config(
            {"mcpServers": {"s": {"command": "x", "env": {"K": "${NOPE_VAR}"}}}}, environ={}
        )
    assert str(info.value).startswith(
        "mcp.json: mcpServers.s.env.K: undefined variable ${NOPE_VAR}"
    )


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}')
    with pytest.raises(ConfigError, match=r"^mcp\.json: invalid JSON at line 3, column \d+"):
        load_mcp_config(path)


def test_missing_command_names_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, {"mcpServers": {"time": {"args": ["x"]}}}, ".mcp.json")
    with pytest.raises(
        ConfigError, match=r"^\.mcp\.json: mcpServers\.time\.command: field required"
    ):
        load_mcp_config(path)


def test_explicit_stdio_without_command() -> None:
    with pytest.raises(ConfigError, match=r"^mcp\.json: mcpServers\.t\.command: field required"):
        parse_mcp_config({"mcpServers": {"t": {"type": "stdio", "url": "http://x"}}})


def test_http_without_url() -> None:
    with pytest.raises(ConfigError, match=r"^mcp\.json: servers\.h\.url: field required"):
        parse_mcp_config({"servers": {"h": {"type": "http"}}})


def test_bad_type_names_the_field() -> None:
    with pytest.raises(
        ConfigError, match=r"^mcp\.json: mcpServers\.t\.type: unknown transport 'websocket'"
    ):
        parse_mcp_config({"mcpServers": {"t": {"type": "websocket", "url": "ws://x"}}})


def test_wrongly_typed_field_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"^mcp\.json: mcpServers\.t\.timeout: "):
        parse_mcp_config({"mcpServers": {"t": {"command": "x", "timeout": "soon"}}})
    with pytest.raises(ConfigError, match=r"^mcp\.json: mcpServers\.t\.args\.0: "):
        parse_mcp_config({"mcpServers": {"t": {"command": "x", "args": [1.5]}}})


def test_structural_errors() -> None:
    with pytest.raises(ConfigError, match=r"^mcp\.json: mcpServers: field required"):
        parse_mcp_config({"other": {}})
    with pytest.raises(ConfigError, match=r"^mcp\.json: expected a JSON object"):
        parse_mcp_config([])
    with pytest.raises(ConfigError, match=r"^mcp\.json: mcpServers\.a: expected an object"):
        parse_mcp_config({"mcpServers": {"a": "python"}})
    with pytest.raises(ConfigError, match=r"no '/'"):
        parse_mcp_config({"mcpServers": {"a/b": {"command": "x"}}})


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^absent\.json: cannot read"):
        load_mcp_config(tmp_path / "absent.json")


def test_config_is_a_plain_model() -> None:
    server = MCPServerConfig(type="stdio", command="x")
    assert server.timeout == 30.0 and server.enabled and server.exposes("anything")


@pytest.mark.parametrize(
    ("shape", "server", "message"),
    [
        (
            "mcpServers",
            {"command": "x", "excludedTool": ["write_file"]},
            r"^mcp\.json: mcpServers\.s\.excludedTool: unknown key "
            r"\(did you mean 'excludedTools'\?\)$",
        ),
        (
            "servers",
            {"type": "stdio", "command": "x", "arg": ["--root", "/"]},
            r"^mcp\.json: servers\.s\.arg: unknown key \(did you mean 'args'\?\)$",
        ),
        (
            "servers",
            {"type": "stdio", "command": "x", "envFile": "${workspaceFolder}/.env"},
            r"^mcp\.json: servers\.s\.envFile: not supported",
        ),
    ],
)
def test_unknown_keys_are_errors_with_a_did_you_mean(
    shape: str, server: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_mcp_config({shape: {"s": server}}, workspace=Path("/w"))


def test_other_hosts_harmless_keys_are_accepted() -> None:
    config = parse_mcp_config(
        {"servers": {"s": {"command": "x", "dev": {"watch": "src/**"}, "alwaysAllow": ["a"]}}}
    )
    assert config.servers["s"].command == "x"


def test_two_servers_with_one_name_is_an_error_naming_both(tmp_path: Path) -> None:
    repeated = write(
        tmp_path, '{"mcpServers": {"time": {"command": "a"}, "time": {"command": "b"}}}'
    )
    with pytest.raises(ConfigError, match=r"mcpServers\.time and mcpServers\.time: two servers"):
        load_mcp_config(repeated)
    both = {"mcpServers": {"time": {"command": "a"}}, "servers": {"time": {"command": "b"}}}
    with pytest.raises(ConfigError, match=r"mcpServers\.time and servers\.time: two servers"):
        parse_mcp_config(both)


def test_vscode_variables_expand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    workspace = tmp_path / "project"
    (workspace / ".vscode").mkdir(parents=True)
    path = workspace / ".vscode" / "mcp.json"
    server = {
        "type": "stdio",
        "command": "~/bin/tool",
        "args": ["${workspaceFolder}/data", "~/notes", "${userHome}${/}x"],
        "env": {"TOKEN": "${env:MY_TOKEN}"},
        "cwd": "~/work",
    }
    path.write_text(json.dumps({"servers": {"s": server}, "inputs": []}))
    parsed = load_mcp_config(path, environ={"MY_TOKEN": "t0k"}).servers["s"]
    home = tmp_path / "home"
    assert parsed.command == f"{home}/bin/tool"
    assert parsed.args == [f"{workspace}/data", f"{home}/notes", f"{home}/x"]
    assert parsed.env == {"TOKEN": "t0k"}
    assert parsed.cwd == f"{home}/work"
    # Outside .vscode/, the workspace is the config's own folder.
    plain = write(tmp_path, {"mcpServers": {"s": {"command": "x", "cwd": "${workspaceFolder}"}}})
    assert load_mcp_config(plain).servers["s"].cwd == str(tmp_path)


def test_vscode_inputs_and_unset_env_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match=r"env\.KEY: \$\{input:api-key\} asks the user"):
        parse_mcp_config({"servers": {"s": {"command": "x", "env": {"KEY": "${input:api-key}"}}}})
    with pytest.raises(ConfigError, match=r"undefined variable \$\{env:NOPE\} \(set NOPE"):
        parse_mcp_config({"servers": {"s": {"command": "${env:NOPE}"}}}, environ={})
    with pytest.raises(ConfigError, match=r"unsupported variable \$\{config:x\}"):
        parse_mcp_config({"servers": {"s": {"command": "${config:x}"}}}, environ={})


async def test_vscode_variables_reach_a_real_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "project"
    (workspace / ".vscode").mkdir(parents=True)
    monkeypatch.setenv("DEMO_TOKEN", "t0k")
    server = {
        "type": "stdio",
        "command": sys.executable,
        "args": ["${workspaceFolder}/demo_server.py"],
        "env": {"TOKEN": "${env:DEMO_TOKEN}", "HOME_SEEN": "${userHome}"},
        "cwd": "${workspaceFolder}",
    }
    (workspace / "demo_server.py").write_text((HERE / "demo_server.py").read_text())
    path = workspace / ".vscode" / "mcp.json"
    path.write_text(json.dumps({"inputs": [], "servers": {"demo": server}}))
    (source,) = load_mcp_sources(path)
    try:
        assert await source.call_tool("getenv", {"name": "TOKEN"}) == {"result": "t0k"}
        assert await source.call_tool("getenv", {"name": "HOME_SEEN"}) == {
            "result": str(Path.home())
        }
    finally:
        await source.aclose()

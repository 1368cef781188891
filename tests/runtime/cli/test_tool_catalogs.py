"""Catalog files: ToolSpec or MCP ``tools/list`` records, JSONL or a JSON array; strict fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paraagent_runtime.cli.tool_catalogs import read_tool_specs, resolve_catalog
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.tools import ToolSpec

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
MCP_TOOL = {
    "name": "get_forecast",
    "description": "Forecast for a city.",
    "inputSchema": SCHEMA,
    "annotations": {"readOnlyHint": True},
}


def test_toolspec_lines_read_back_even_with_unicode_line_separators(tmp_path: Path) -> None:
    specs = [
        ToolSpec(id="aws/match", description="pattern ^[\u0085\u2028 ]+$", input_schema=SCHEMA),
        ToolSpec(id="aws/other", description="para\u2029graph"),
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("".join(spec.model_dump_json() + "\n" for spec in specs), encoding="utf-8")
    assert read_tool_specs(path) == specs


def test_mcp_tools_list_lines_keep_their_schema_and_hints(tmp_path: Path) -> None:
    path = tmp_path / "weather.jsonl"
    path.write_text(
        json.dumps(MCP_TOOL)
        + "\n\n"
        + json.dumps({"name": "ping", "inputSchema": {"type": "object"}})
        + "\n"
    )
    forecast, ping = read_tool_specs(path)
    assert forecast.id == "weather/get_forecast" and forecast.input_schema == SCHEMA
    assert forecast.annotations.read_only and forecast.description == "Forecast for a city."
    assert ping.id == "weather/ping"


@pytest.mark.parametrize(
    "records",
    [[MCP_TOOL], [ToolSpec(id="weather/get_forecast", input_schema=SCHEMA).model_dump()]],
    ids=["mcp", "toolspec"],
)
def test_a_json_array_of_either_shape(tmp_path: Path, records: list[dict]) -> None:
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(records))
    (spec,) = resolve_catalog(str(path)).tools
    assert spec.id == "weather/get_forecast" and spec.input_schema == SCHEMA


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {"id": "a/b", "inputSchema": SCHEMA},
            r"t\.jsonl:2: unknown field 'inputSchema' in a ToolSpec record "
            r"\(did you mean 'input_schema'\?\)",
        ),
        (
            {"name": "b", "inputschema": SCHEMA},
            r"t\.jsonl:2: unknown field 'inputschema' in an MCP tool "
            r"\(did you mean 'inputSchema'\?\)",
        ),
        (
            {"name": "b", "annotations": {"readOnly": True}},
            r"t\.jsonl:2: unknown field 'readOnly' in MCP annotations "
            r"\(did you mean 'readOnlyHint'\?\)",
        ),
        (
            {"id": "a/b", "description": 3},
            r"t\.jsonl:2: description: Input should be a valid string",
        ),
        ({"tool": "b"}, r"t\.jsonl:2: neither a ToolSpec record \(with 'id'\) nor an MCP tool"),
    ],
)
def test_a_bad_record_names_the_line_and_the_field(
    tmp_path: Path, line: dict, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(MCP_TOOL) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(ConfigError, match=message):
        read_tool_specs(path)


def test_a_json_file_that_is_not_an_array_of_tools(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"tools": [MCP_TOOL]}))
    with pytest.raises(ConfigError, match="expected a JSON array of tools"):
        read_tool_specs(path)
    path.write_text(json.dumps([MCP_TOOL, {"name": "x", "input_schema": {}}]))
    with pytest.raises(ConfigError, match=r"t\.json: item 1: unknown field 'input_schema'"):
        read_tool_specs(path)

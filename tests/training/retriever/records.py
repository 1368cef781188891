"""Small ToolEnv records for the retriever-training tests."""

from __future__ import annotations

from mcp_servers.toolenv.records import ToolRecord


def make_record(
    provider: str, name: str, category: str, source: str = "openapi", license: str = ""
) -> ToolRecord:
    return ToolRecord(
        name=name,
        provider=provider,
        category=category,
        source=source,
        license=license,
        description=f"Returns the {name.replace('_', ' ')} of a city. Paginated.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
        },
    )


RECORDS = [
    make_record(provider, f"{verb}_{thing}", category)
    for provider, category in (("weather_api", "weather"), ("geo_api", "maps"))
    for verb in ("get", "list")
    for thing in ("forecast", "alerts", "stations")
] + [make_record("scraped", "get_page", "web", source="toucan_crawled")]

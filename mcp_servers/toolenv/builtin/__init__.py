"""The built-in catalog: tools written by the project, each with a handler grounded in the world."""

from __future__ import annotations

from functools import cache

from ..records import ToolRecord
from . import aviation, finance, food, hotels, maps, media, personal, translation, weather
from ._registry import BuiltinTool, Handler, Provider

__all__ = [
    "BuiltinTool",
    "Handler",
    "Provider",
    "builtin_handlers",
    "builtin_records",
    "builtin_tools",
]

_PROVIDERS: tuple[Provider, ...] = (
    weather.provider, aviation.provider, hotels.provider, finance.finance, finance.currency,
    maps.maps, maps.clock, personal.calendar, personal.email, media.news, media.sports,
    media.movies, food.provider, translation.provider,
)  # fmt: skip


@cache
def builtin_tools() -> tuple[BuiltinTool, ...]:
    """Every built-in tool with its handler, in provider order."""
    return tuple(tool for provider in _PROVIDERS for tool in provider.tools)


def builtin_records() -> list[ToolRecord]:
    """The built-in catalog as :class:`ToolRecord` objects."""
    return [tool.record for tool in builtin_tools()]


def builtin_handlers() -> dict[str, Handler]:
    """Handlers of the built-in tools keyed by tool id (``provider/name``)."""
    return {tool.record.id: tool.handler for tool in builtin_tools()}

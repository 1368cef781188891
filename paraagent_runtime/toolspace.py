"""The toolspace: the union of tool sources, name mapping, argument validation and search.

A :class:`Toolspace` maps model-facing names (``<source>__<tool>``) to the source that serves the
tool, validates arguments against each tool's JSON Schema before dispatch, and keeps a
:class:`~paraagent_runtime.search.ToolSearch` index in step with the sources' tool lists. A
:class:`ToolSession` is one episode's view: the set of tools the model has loaded (through
``search_tools``/``inspect_tool``, or all of them when the toolspace is small) and the episode's
de-duplication cache.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import jsonschema
import referencing.exceptions
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

from .errors import UnknownToolError, UserError
from .keyword_search import KeywordToolSearch, tokenize
from .meta import META_TOOL_SPECS, meta_tool_spec
from .search import ToolSearch
from .sources import ToolSource
from .tools import ToolResult, ToolSpec

__all__ = ["ToolSession", "Toolspace"]

logger = logging.getLogger(__name__)

_MAX_REPORTED_ERRORS = 3
_SUGGEST_SCAN_LIMIT = 2000


@dataclass
class ToolSession:
    """One episode's loaded tools and its de-duplication cache.

    Attributes:
        loaded: model-facing names the model may call in execute turns.
        cache: successful results of read-only calls, by :meth:`ToolCall.dedup_key`.
    """

    loaded: set[str] = field(default_factory=set)
    cache: dict[str, ToolResult] = field(default_factory=dict)

    def is_loaded(self, name: str) -> bool:
        """True when ``name`` was loaded into this session."""
        return name in self.loaded

    def load(self, names: Iterable[str]) -> None:
        """Make ``names`` callable in this session."""
        self.loaded.update(names)


def _error_path(error: jsonschema.ValidationError) -> str:
    return error.json_path.replace("$", "arguments", 1)


def _describe(errors: list[jsonschema.ValidationError]) -> str:
    errors.sort(key=lambda error: (list(map(str, error.absolute_path)), error.message))
    lines = [f"{_error_path(error)}: {error.message}" for error in errors[:_MAX_REPORTED_ERRORS]]
    if len(errors) > _MAX_REPORTED_ERRORS:
        lines.append(f"(and {len(errors) - _MAX_REPORTED_ERRORS} more)")
    return "; ".join(lines)


class Toolspace:
    """The tools of several sources behind one name table.

    Args:
        sources: the tool sources; on a model-facing name collision the earlier source wins.
        search: the index behind ``search_tools``; defaults to :class:`KeywordToolSearch`.
        preload_threshold: sessions start with every tool loaded when the toolspace has at most
            this many tools (the model then needs no explore phase).

    Attributes:
        source_errors: why a source's last listing failed, by source name (its tools are absent).
    """

    def __init__(
        self,
        sources: Sequence[ToolSource],
        *,
        search: ToolSearch | None = None,
        preload_threshold: int = 32,
    ) -> None:
        self._sources: dict[str, ToolSource] = {}
        for source in sources:
            self._check_new_source(source)
            self._sources[source.name] = source
        self._search = search if search is not None else KeywordToolSearch()
        self.preload_threshold = preload_threshold
        self._listed: dict[str, list[ToolSpec]] = {}
        self._tools: dict[str, ToolSpec] = {}
        self._routes: dict[str, str] = {}
        self._by_id: dict[str, ToolSpec] = {}
        self._by_tool: dict[str, list[ToolSpec]] = {}
        self._name_index: dict[str, list[str]] = {}
        self._validators: dict[str, Validator | None] = {}
        self.source_errors: dict[str, str] = {}

    def _check_new_source(self, source: ToolSource) -> None:
        if source.name in self._sources:
            raise UserError(
                f"two tool sources are both named {source.name!r}; names must be unique"
            )

    @property
    def sources(self) -> Mapping[str, ToolSource]:
        """The sources by name, in priority order."""
        return MappingProxyType(self._sources)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        """Every tool of every source, by model-facing name."""
        return MappingProxyType(self._tools)

    def get(self, name: str) -> ToolSpec | None:
        """Return the spec behind the model-facing ``name``, or None."""
        return self._tools.get(name)

    def source_of(self, name: str) -> str | None:
        """The name of the source serving the model-facing ``name``, or None."""
        return self._routes.get(name)

    def get_by_id(self, identifier: str) -> ToolSpec | None:
        """Return the spec with tool id ``identifier`` (``<source>/<tool>``), or None."""
        return self._by_id.get(identifier)

    async def _list(self, source: ToolSource) -> None:
        try:
            self._listed[source.name] = list(await source.list_tools())
        except Exception as exc:  # noqa: BLE001 - one broken server must not hide the others
            logger.warning("tool source %r failed to list its tools: %s", source.name, exc)
            self.source_errors[source.name] = f"{type(exc).__name__}: {exc}"
            self._listed.pop(source.name, None)
        else:
            self.source_errors.pop(source.name, None)

    async def refresh(self) -> None:
        """List the tools of every source again, rebuild the name table and the search index.

        A source whose listing fails contributes no tools; the failure is logged and kept in
        :attr:`source_errors`.
        """
        await asyncio.gather(*(self._list(source) for source in self._sources.values()))
        await self._rebuild()

    async def _rebuild(self) -> None:
        tools: dict[str, ToolSpec] = {}
        routes: dict[str, str] = {}
        for source_name in self._sources:
            for spec in self._listed.get(source_name, []):
                kept = tools.get(spec.name)
                if kept is not None:
                    logger.warning(
                        "tool %r (from %r) has the same model-facing name %r as %r; keeping %r",
                        spec.id,
                        source_name,
                        spec.name,
                        kept.id,
                        kept.id,
                    )
                    continue
                tools[spec.name] = spec
                routes[spec.name] = source_name
        self._tools, self._routes = tools, routes
        self._by_id = {spec.id: spec for spec in tools.values()}
        self._by_tool = {}
        self._name_index = {}
        for name, spec in tools.items():
            self._by_tool.setdefault(spec.tool, []).append(spec)
            for token in set(tokenize(name)):
                self._name_index.setdefault(token, []).append(name)
        self._validators = {}
        await self._search.update(list(tools.values()))

    async def add_source(self, source: ToolSource) -> None:
        """Add ``source`` (listing its tools) with the lowest priority.

        Raises:
            UserError: a source with the same name is already present.
        """
        self._check_new_source(source)
        self._sources[source.name] = source
        await self._list(source)
        await self._rebuild()

    async def remove_source(self, name: str) -> None:
        """Remove the source called ``name``, close it and drop its tools.

        Raises:
            UserError: no source has that name.
        """
        source = self._sources.pop(name, None)
        if source is None:
            raise UserError(
                f"no tool source named {name!r} (have: {', '.join(self._sources) or 'none'})"
            )
        self._listed.pop(name, None)
        self.source_errors.pop(name, None)
        await self._rebuild()
        await source.aclose()

    def wrap_sources(self, wrap: Callable[[ToolSource], ToolSource]) -> None:
        """Replace every source by ``wrap(source)``: approval, audit or filtering layers.

        The wrapper must keep the source's name; listed tools and routes stay as they are.

        Raises:
            UserError: a wrapper changed a source's name.
        """
        wrapped: dict[str, ToolSource] = {}
        for name, source in self._sources.items():
            layer = wrap(source)
            if layer.name != name:
                raise UserError(f"a wrapper renamed tool source {name!r} to {layer.name!r}")
            wrapped[name] = layer
        self._sources = wrapped

    def suggest(self, name: str, *, limit: int = 3) -> list[str]:
        """Model-facing names close to ``name`` (a typo, a bare tool name, or a tool id).

        Large toolspaces compare ``name`` only with the names sharing most of its words, so a
        typo among 50k tools costs milliseconds rather than a second of blocked event loop.
        """
        exact = [found for found in (self._by_id.get(name), *self._by_tool.get(name, ())) if found]
        candidates: list[str] = [spec.name for spec in META_TOOL_SPECS]
        if len(self._tools) <= _SUGGEST_SCAN_LIMIT:
            candidates.extend(self._tools)
        else:
            shared: Counter[str] = Counter()
            for token in set(tokenize(name)):
                shared.update(self._name_index.get(token, ()))
            candidates.extend(found for found, _ in shared.most_common(_SUGGEST_SCAN_LIMIT))
        close = difflib.get_close_matches(name, candidates, n=limit, cutoff=0.6)
        return list(dict.fromkeys([*(spec.name for spec in exact), *close]))[:limit]

    def unknown_tool_message(self, name: str) -> str:
        """The observation text for a call to a tool nobody serves."""
        message = f"unknown tool {name!r}."
        suggestions = self.suggest(name)
        if suggestions:
            message += f" Did you mean: {', '.join(suggestions)}?"
        return message + " Use search_tools to find tools by what they do."

    def _validator(self, name: str, spec: ToolSpec) -> Validator | None:
        if name in self._validators:
            return self._validators[name]
        schema = spec.input_schema
        validator: Validator | None
        try:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validator = cls(schema)
        except SchemaError as exc:
            logger.warning(
                "tool %r has an invalid input schema (%s); not validating its arguments",
                spec.id,
                exc.message,
            )
            validator = None
        self._validators[name] = validator
        return validator

    def validate_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        """Check ``arguments`` against the input schema of tool (or meta-tool) ``name``.

        Returns:
            None when the arguments are valid (or the tool's schema is unusable), else a readable
            message naming each offending path and the problem.

        Raises:
            UnknownToolError: ``name`` is neither a tool of this toolspace nor a meta-tool.
        """
        spec = self._tools.get(name) or meta_tool_spec(name)
        if spec is None:
            raise UnknownToolError(self.unknown_tool_message(name))
        validator = self._validator(name, spec)
        if validator is None:
            return None
        try:
            errors = list(validator.iter_errors(arguments))
        except referencing.exceptions.Unresolvable as exc:
            logger.warning(
                "tool %r has an unresolvable $ref (%s); not validating its arguments", spec.id, exc
            )
            self._validators[name] = None
            return None
        return _describe(errors) if errors else None

    async def search(self, query: str, *, top_k: int = 5) -> list[ToolSpec]:
        """The ``top_k`` tools best matching ``query``, best first."""
        hits = await self._search.search(query, top_k=top_k)
        return [spec for identifier, _ in hits if (spec := self._by_id.get(identifier)) is not None]

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call the tool with model-facing ``name`` on its source; source exceptions propagate.

        Raises:
            UnknownToolError: no source serves ``name``.
        """
        spec = self._tools.get(name)
        if spec is None:
            raise UnknownToolError(self.unknown_tool_message(name))
        return await self._sources[self._routes[name]].call_tool(spec.tool, arguments)

    def new_session(self) -> ToolSession:
        """A fresh episode session; every tool is preloaded when there are few enough."""
        session = ToolSession()
        if len(self._tools) <= self.preload_threshold:
            session.load(self._tools)
        return session

    async def aclose(self) -> None:
        """Close every source; a failing close is logged and does not stop the others."""
        results = await asyncio.gather(
            *(source.aclose() for source in self._sources.values()), return_exceptions=True
        )
        for source_name, result in zip(self._sources, results, strict=True):
            if isinstance(result, Exception):
                logger.warning("closing tool source %r failed: %s", source_name, result)

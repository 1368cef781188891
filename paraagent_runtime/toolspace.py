"""The toolspace: the union of tool sources, name mapping and search; and one episode's view.

A :class:`Toolspace` names the tools of its sources for the model (as close to each tool's own
name as the others allow, see :mod:`paraagent_runtime.naming`; the resolver also accepts the
original name and the usual sanitized spellings when unambiguous), maps each name to the source
that serves the tool (a :class:`Route`, with the tool's argument check compiled once) and keeps a
:class:`~paraagent_runtime.search.ToolSearch` index in step with the sources' tool lists. Every
listed schema goes through :func:`~paraagent_runtime.validation.compile_schema`; a tool whose
schema is invalid even after normalization is not callable and is listed in
:attr:`Toolspace.unusable_tools` with the reason.

A :class:`ToolSession` is one episode's view of it: the episode's own meta-tools (a
:class:`~paraagent_runtime.meta.MetaToolSource`), the set of tools the model has loaded (through
``search_tools``/``inspect_tool``, or all of them when the toolspace is small) and the episode's
de-duplication cache. The dispatcher resolves every call through the
session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .errors import InvalidSchemaError, UnknownToolError, UserError
from .keyword_search import KeywordToolSearch, tokenize
from .meta import META_TOOLS, SEARCH_TOOLS, MetaToolSource
from .naming import assign_names, model_facing_name, name_aliases, unique_aliases
from .search import NeedAwareSearch, SearchHit, ToolSearch
from .sources import ToolSource
from .tools import ToolResult, ToolSpec
from .validation import ArgumentCheck, compile_schema

__all__ = ["Route", "ToolSession", "Toolspace"]

logger = logging.getLogger(__name__)

_SUGGEST_SCAN_LIMIT = 2000


@dataclass(frozen=True)
class Route:
    """Where a call goes: the tool's spec, the source that serves it, its argument check.

    Attributes:
        spec: the tool.
        source: the source serving it.
        check: the tool's compiled input schema.
        tool: the name to pass to the source (``spec.tool``, worked out once, not per call).
    """

    spec: ToolSpec
    source: ToolSource
    check: ArgumentCheck
    tool: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool", self.spec.tool)


def _checked(
    specs: Sequence[ToolSpec],
) -> tuple[list[tuple[ToolSpec, ArgumentCheck]], dict[str, str]]:
    """Compile the schemas of ``specs``.

    Returns:
        The usable specs (normalized) with their checks, and why the others are unusable, by id.
    """
    usable: list[tuple[ToolSpec, ArgumentCheck]] = []
    unusable: dict[str, str] = {}
    for spec in specs:
        try:
            check = compile_schema(spec.input_schema)
        except InvalidSchemaError as exc:
            unusable[spec.id] = str(exc)
            continue
        if check.schema != spec.input_schema:
            spec = spec.model_copy(update={"input_schema": check.schema})
        usable.append((spec, check))
    return usable, unusable


class ToolSession:
    """One episode's view of a toolspace: what the model may call now, and its dedup cache.

    The session's own sources (:meth:`add_source`; the meta-tools, opened by
    :meth:`Toolspace.new_session`) are always callable and take precedence; the toolspace's
    tools are callable once loaded (through ``search_tools``/``inspect_tool``, or all of them
    when the toolspace is small).

    Args:
        toolspace: the tools behind this view.

    Attributes:
        toolspace: the tools behind this view.
        loaded: model-facing names of toolspace tools the model may call in execute turns.
        cache: successful results of read-only calls, by :meth:`ToolCall.dedup_key`.
    """

    def __init__(self, toolspace: Toolspace) -> None:
        self.toolspace = toolspace
        self.loaded: set[str] = set()
        self.cache: dict[str, ToolResult] = {}
        self._own: dict[str, Route] = {}

    async def add_source(self, source: ToolSource) -> None:
        """Make every tool of ``source`` callable in this session, without loading.

        The session does not close ``source``; whoever opened it does.

        Raises:
            InvalidSchemaError: a tool's input schema is unusable.
        """
        for spec in await source.list_tools():
            self._own.setdefault(spec.name, Route(spec, source, compile_schema(spec.input_schema)))

    def load(self, names: Iterable[str]) -> None:
        """Make ``names`` (model-facing names or their aliases) callable in this session."""
        resolve = self.toolspace.resolve
        self.loaded.update(resolve(name) or name for name in names)

    def get(self, name: str) -> ToolSpec | None:
        """The spec behind ``name`` (loaded or not), or None."""
        own = self._own.get(name)
        return own.spec if own is not None else self.toolspace.get(name)

    def route(self, name: str) -> Route | None:
        """Where a call to ``name`` goes, or None when the model may not call it now."""
        own = self._own.get(name)
        if own is not None:
            return own
        resolved = self.toolspace.resolve(name)
        return self.toolspace.route(resolved) if resolved in self.loaded else None

    @property
    def tools(self) -> list[ToolSpec]:
        """Every tool callable now: the session's own, then the loaded ones in toolspace order."""
        return [route.spec for route in self._own.values()] + self.loaded_tools

    @property
    def loaded_tools(self) -> list[ToolSpec]:
        """The loaded toolspace tools, in toolspace order."""
        return [spec for name, spec in self.toolspace.tools.items() if name in self.loaded]

    def unknown_tool_message(self, name: str) -> str:
        """The observation text for a call to a tool this session does not know.

        Close names are suggested from the session's own tools and the toolspace's.
        """
        return self.toolspace.unknown_tool_message(name, extra=self._own)


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

    # Built by rebuild from the listings; see there.
    _routes: dict[str, Route]
    _aliases: dict[str, str]
    _unusable: dict[str, str]

    def __init__(
        self,
        sources: Sequence[ToolSource],
        *,
        search: ToolSearch | None = None,
        preload_threshold: int = 32,
    ) -> None:
        self._sources: dict[str, ToolSource] = {}
        self._prefixed: set[str] = set()
        for source in sources:
            self._put_source(source)
        self._search = search if search is not None else KeywordToolSearch()
        self.preload_threshold = preload_threshold
        self._listed: dict[str, list[tuple[ToolSpec, ArgumentCheck]]] = {}
        self._listed_unusable: dict[str, dict[str, str]] = {}
        self._tools: dict[str, ToolSpec] = {}
        self._routes = {}
        self._aliases = {}
        self._unusable = {}
        self._by_id: dict[str, ToolSpec] = {}
        self._by_tool: dict[str, list[ToolSpec]] = {}
        self._name_index: dict[str, list[str]] = {}
        self.source_errors: dict[str, str] = {}

    def _put_source(self, source: ToolSource) -> None:
        if source.name in self._sources:
            raise UserError(
                f"two tool sources are both named {source.name!r}; names must be unique"
            )
        self._sources[source.name] = source
        # Read once, here: wrappers added later (approvals, filters) need not forward it.
        if getattr(source, "prefixed_names", False):
            self._prefixed.add(source.name)

    @property
    def sources(self) -> Mapping[str, ToolSource]:
        """The sources by name, in priority order."""
        return MappingProxyType(self._sources)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        """Every tool of every source, by model-facing name."""
        return MappingProxyType(self._tools)

    @property
    def unusable_tools(self) -> Mapping[str, str]:
        """Tools listed by their source but not callable, by tool id: why (an invalid schema)."""
        return MappingProxyType(
            {
                identifier: reason
                for listed in self._listed_unusable.values()
                for identifier, reason in listed.items()
            }
        )

    def resolve(self, name: str) -> str | None:
        """The model-facing name ``name`` stands for (itself, or an unambiguous alias), or None."""
        return name if name in self._routes else self._aliases.get(name)

    def spellings(self, name: str) -> set[str]:
        """Every spelling that resolves to the model-facing ``name``: itself and its aliases."""
        spec = self._tools.get(name)
        if spec is None:
            return set()
        spellings = name_aliases(spec.id, prefixed=spec.source in self._prefixed)
        aliases = (alias for alias in spellings if self._aliases.get(alias) == name)
        return {name, *aliases}

    def get(self, name: str) -> ToolSpec | None:
        """Return the spec behind the model-facing ``name`` (or an alias of it), or None."""
        resolved = self.resolve(name)
        return self._tools[resolved] if resolved is not None else None

    def get_by_id(self, identifier: str) -> ToolSpec | None:
        """Return the spec with tool id ``identifier`` (``<source>/<tool>``), or None."""
        return self._by_id.get(identifier)

    async def _list(self, source: ToolSource) -> None:
        try:
            specs = await source.list_tools()
        except Exception as exc:  # noqa: BLE001 - one broken server must not hide the others
            logger.warning("tool source %r failed to list its tools: %s", source.name, exc)
            self.source_errors[source.name] = f"{type(exc).__name__}: {exc}"
            self._listed.pop(source.name, None)
            self._listed_unusable.pop(source.name, None)
            return
        self.source_errors.pop(source.name, None)
        usable, unusable = _checked(specs)
        self._listed[source.name] = usable
        self._listed_unusable[source.name] = unusable
        for identifier, reason in unusable.items():
            logger.warning("tool %r is unusable: %s", identifier, reason)

    async def refresh(self) -> None:
        """List the tools of every source again, rebuild the name table and the search index.

        A source whose listing fails contributes no tools; the failure is logged and kept in
        :attr:`source_errors`.
        """
        await asyncio.gather(*(self._list(source) for source in self._sources.values()))
        await self.rebuild()

    async def list_source(self, name: str) -> None:
        """List the tools of the source called ``name`` again; :meth:`rebuild` puts them to use.

        The other sources keep their last listing, so one slow or hanging source does not hold
        back the others. A failure is kept in :attr:`source_errors`, as in :meth:`refresh`.

        Raises:
            UserError: no source has that name.
        """
        source = self._sources.get(name)
        if source is None:
            raise UserError(
                f"no tool source named {name!r} (have: {', '.join(self._sources) or 'none'})"
            )
        await self._list(source)

    async def rebuild(self) -> None:
        """Rebuild the name table and the search index from the sources' last listings."""
        listed = {
            spec.id: (spec, check, source)
            for source_name, source in self._sources.items()
            for spec, check in self._listed.get(source_name, [])
        }
        unusable = {
            identifier
            for source_name in self._sources
            for identifier in self._listed_unusable.get(source_name, {})
        }
        names = assign_names(listed, prefixed_sources=self._prefixed, reserved=META_TOOLS)
        routes: dict[str, Route] = {}
        for identifier, (spec, check, source) in listed.items():
            named = spec.named(names[identifier])
            routes[named.name] = Route(named, source, check)
        spellings = {
            identifier: name_aliases(identifier, prefixed=spec.source in self._prefixed)
            for identifier, (spec, _, _) in listed.items()
        }
        self._aliases = unique_aliases(names, spellings)
        self._unusable = {
            spelling: identifier
            for identifier in unusable
            for spelling in name_aliases(identifier)
            if spelling not in routes and spelling not in self._aliases
        }
        self._routes = routes
        self._tools = {name: route.spec for name, route in routes.items()}
        tools = self._tools
        self._by_id = {spec.id: spec for spec in tools.values()}
        self._by_tool = {}
        self._name_index = {}
        for name, spec in tools.items():
            self._by_tool.setdefault(spec.tool, []).append(spec)
            for token in set(tokenize(name)):
                self._name_index.setdefault(token, []).append(name)
        await self._search.update(list(tools.values()))

    async def add_source(self, source: ToolSource) -> None:
        """Add ``source`` (listing its tools) with the lowest priority.

        Raises:
            UserError: a source with the same name is already present.
        """
        self._put_source(source)
        await self._list(source)
        await self.rebuild()

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
        self._prefixed.discard(name)
        self._listed.pop(name, None)
        self._listed_unusable.pop(name, None)
        self.source_errors.pop(name, None)
        await self.rebuild()
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
        self._routes = {
            name: dataclasses.replace(route, source=wrapped[route.source.name])
            for name, route in self._routes.items()
        }

    def suggest(self, name: str, *, limit: int = 3, extra: Iterable[str] = ()) -> list[str]:
        """Model-facing names close to ``name`` (a typo, a bare tool name, or a tool id).

        Large toolspaces compare ``name`` only with the names sharing most of its words, so a
        typo among 50k tools costs milliseconds rather than a second of blocked event loop.

        Args:
            name: the name the model used.
            limit: at most this many names.
            extra: further names to consider (a session's own tools).
        """
        exact = [found for found in (self._by_id.get(name), *self._by_tool.get(name, ())) if found]
        names: list[str] = list(extra)
        if len(self._tools) <= _SUGGEST_SCAN_LIMIT:
            names.extend(self._tools)
        else:
            shared: Counter[str] = Counter()
            for token in set(tokenize(name)):
                shared.update(self._name_index.get(token, ()))
            names.extend(found for found, _ in shared.most_common(_SUGGEST_SCAN_LIMIT))
        # A typo may be of the name or of its <source>__<tool> spelling.
        spelled: dict[str, str] = {}
        for found in names:
            spec = self._tools.get(found)
            if spec is not None and (qualified := model_facing_name(spec.id)) != found:
                spelled[qualified] = found
        close = difflib.get_close_matches(name, [*names, *spelled], n=limit, cutoff=0.6)
        close = [spelled.get(found, found) for found in close]
        return list(dict.fromkeys([*(spec.name for spec in exact), *close]))[:limit]

    def unknown_tool_message(self, name: str, *, extra: Iterable[str] = ()) -> str:
        """The observation text for a call to a tool nobody serves (``extra`` as in suggest).

        A tool that is listed but unusable (:attr:`unusable_tools`) is named with its reason.
        """
        unusable = self._unusable.get(name)
        if unusable is not None:
            return f"tool {name!r} cannot be used: {self.unusable_tools[unusable]}."
        message = f"unknown tool {name!r}."
        suggestions = self.suggest(name, extra=extra)
        if suggestions:
            message += f" Did you mean: {', '.join(suggestions)}?"
        return message + f" Use {SEARCH_TOOLS} to find tools by what they do."

    async def search(self, query: str, *, top_k: int = 5) -> list[ToolSpec]:
        """The ``top_k`` tools best matching ``query``, best first."""
        return [spec for spec, _ in await self.search_answers(query, top_k=top_k)]

    async def search_answers(
        self, query: str, *, top_k: int = 5
    ) -> list[tuple[ToolSpec, str | None]]:
        """Like :meth:`search`, with the part of ``query`` each tool answers (``None``: all of it).

        Only a :class:`~paraagent_runtime.search.NeedAwareSearch` splits a request into parts.
        """
        if isinstance(self._search, NeedAwareSearch):
            hits = await self._search.search_hits(query, top_k=top_k)
        else:
            found = await self._search.search(query, top_k=top_k)
            hits = [SearchHit(identifier, score) for identifier, score in found]
        return [
            (spec, hit.answers) for hit in hits if (spec := self._by_id.get(hit.tool)) is not None
        ]

    def route(self, name: str) -> Route | None:
        """Where a call to the model-facing ``name`` (or an alias) goes, or None if nowhere."""
        resolved = self.resolve(name)
        return self._routes[resolved] if resolved is not None else None

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call the tool with model-facing ``name`` on its source; source exceptions propagate.

        Raises:
            UnknownToolError: no source serves ``name``.
        """
        route = self.route(name)
        if route is None:
            raise UnknownToolError(self.unknown_tool_message(name))
        return await route.source.call_tool(route.tool, arguments)

    async def new_session(self) -> ToolSession:
        """A fresh episode session with its own meta-tools.

        Every tool is preloaded when there are at most :attr:`preload_threshold`.
        """
        session = ToolSession(self)
        await session.add_source(MetaToolSource(session))
        if self.preloads_every_tool:
            session.load(self._tools)
        return session

    @property
    def preloads_every_tool(self) -> bool:
        """Whether sessions start with every tool loaded (at most :attr:`preload_threshold`)."""
        return len(self._tools) <= self.preload_threshold

    async def aclose(self) -> None:
        """Close every source; a failing close is logged and does not stop the others."""
        results = await asyncio.gather(
            *(source.aclose() for source in self._sources.values()), return_exceptions=True
        )
        for source_name, result in zip(self._sources, results, strict=True):
            if isinstance(result, Exception):
                logger.warning("closing tool source %r failed: %s", source_name, result)

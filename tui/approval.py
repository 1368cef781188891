"""Approvals before destructive tools: a :class:`ToolSource` wrapper awaiting the user's decision.

A tool is destructive when its spec says so (``ToolSpec.annotations.destructive``, the MCP
``destructiveHint``). Before such a call runs, :class:`ApprovalGate` asks its approver (the TUI's
dialog); the answer is *once*, *for this session* or *always* (persisted), for the tool or for its
whole source. :class:`ApprovalToolSource` enforces the decision around any source, so the runtime's
dispatcher stays unaware of approvals. The gate can also be asked ahead of dispatch (from the turn's
``PhaseEvent``) so the time a user takes to decide does not count against the call's timeout.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from paraagent_runtime import (
    ConfigError,
    ToolExecutionError,
    ToolSource,
    Toolspace,
    ToolSpec,
    tool_id,
)

__all__ = [
    "ApprovalDecision",
    "ApprovalDeniedError",
    "ApprovalGate",
    "ApprovalRequest",
    "ApprovalRules",
    "ApprovalToolSource",
    "Approver",
    "install_approvals",
]

logger = logging.getLogger(__name__)

Scope = Literal["once", "session", "always"]
Target = Literal["tool", "source"]


class ApprovalDeniedError(ToolExecutionError):
    """The user refused a destructive call (it becomes a ``tool_error`` observation)."""


@dataclass(frozen=True)
class ApprovalRequest:
    """A destructive call waiting for the user's decision."""

    spec: ToolSpec
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ApprovalDecision:
    """The user's answer: allow or deny, how long the allowance lasts, and what it covers."""

    allow: bool
    scope: Scope = "once"
    target: Target = "tool"


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


@dataclass
class ApprovalRules:
    """Standing allowances: for this session (memory) and always (a JSON file).

    Args:
        path: where "always" allowances persist; ``None`` keeps them in memory only.
    """

    path: Path | None = None
    session_tools: set[str] = field(default_factory=set)
    session_sources: set[str] = field(default_factory=set)
    always_tools: set[str] = field(default_factory=set)
    always_sources: set[str] = field(default_factory=set)

    def load(self) -> None:
        """Read the persisted allowances (a missing file means none).

        Raises:
            ConfigError: the file exists but is not an approvals file.
        """
        if self.path is None or not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            tools, sources = data.get("tools", []), data.get("sources", [])
            if not all(isinstance(item, str) for item in [*tools, *sources]):
                raise ValueError("entries must be strings")
        except (OSError, ValueError, AttributeError) as exc:
            raise ConfigError(
                f'approvals file {self.path}: expected {{"tools": [...], "sources": [...]}} ({exc})'
            ) from exc
        self.always_tools, self.always_sources = set(tools), set(sources)

    def save(self) -> None:
        """Write the "always" allowances (atomically)."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        payload = {"tools": sorted(self.always_tools), "sources": sorted(self.always_sources)}
        temporary.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        temporary.replace(self.path)

    def allows(self, spec: ToolSpec) -> bool:
        """True when a standing allowance covers ``spec``."""
        return (
            spec.id in self.session_tools
            or spec.id in self.always_tools
            or spec.source in self.session_sources
            or spec.source in self.always_sources
        )

    def record(self, spec: ToolSpec, decision: ApprovalDecision) -> None:
        """Remember an allowing decision beyond this one call."""
        if not decision.allow or decision.scope == "once":
            return
        key = spec.id if decision.target == "tool" else spec.source
        if decision.scope == "session":
            (self.session_tools if decision.target == "tool" else self.session_sources).add(key)
            return
        (self.always_tools if decision.target == "tool" else self.always_sources).add(key)
        self.save()


def _call_key(spec: ToolSpec, arguments: dict[str, Any]) -> str:
    return spec.id + "\x00" + json.dumps(arguments, sort_keys=True, default=str)


class ApprovalGate:
    """Decides whether a destructive call may run, asking the approver when no rule covers it.

    Args:
        rules: the standing allowances.
        approver: asks the user; without one, destructive calls are denied.
    """

    def __init__(self, rules: ApprovalRules, approver: Approver | None = None) -> None:
        self.rules = rules
        self.approver = approver
        self._decided: dict[str, list[bool]] = {}

    def needs_approval(self, spec: ToolSpec) -> bool:
        """True when calling ``spec`` needs the user's decision now."""
        return spec.annotations.destructive and not self.rules.allows(spec)

    async def _ask(self, spec: ToolSpec, arguments: dict[str, Any]) -> bool:
        if self.approver is None:
            return False
        decision = await self.approver(ApprovalRequest(spec=spec, arguments=arguments))
        self.rules.record(spec, decision)
        return decision.allow

    async def authorize(self, spec: ToolSpec, arguments: dict[str, Any]) -> bool:
        """True when the call may run: harmless, covered by a rule, decided ahead, or allowed."""
        if not self.needs_approval(spec):
            return True
        decided = self._decided.get(_call_key(spec, arguments))
        if decided:
            return decided.pop(0)
        return await self._ask(spec, arguments)

    async def decide_ahead(self, calls: Iterable[tuple[ToolSpec, dict[str, Any]]]) -> None:
        """Ask about a turn's destructive calls before they are dispatched, one after the other.

        The answers are kept for :meth:`authorize`; a "session"/"always" answer covers the
        remaining calls it applies to without asking again.
        """
        for spec, arguments in calls:
            if self.needs_approval(spec):
                allowed = await self._ask(spec, arguments)
                self._decided.setdefault(_call_key(spec, arguments), []).append(allowed)

    def forget_pending(self) -> None:
        """Drop decisions taken ahead that no call used (for instance, rejected arguments)."""
        self._decided.clear()


class ApprovalToolSource:
    """Wraps a source so its destructive calls run only once the gate allows them.

    Args:
        inner: the wrapped source (its name is kept).
        gate: decides about each destructive call.
        lookup: finds the spec of a tool id (``Toolspace.get_by_id``).
    """

    def __init__(
        self, inner: ToolSource, gate: ApprovalGate, lookup: Callable[[str], ToolSpec | None]
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self._gate = gate
        self._lookup = lookup

    async def list_tools(self) -> list[ToolSpec]:
        """The inner source's tools."""
        return await self.inner.list_tools()

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call the inner source once the gate allows it.

        Raises:
            ApprovalDeniedError: the user refused the call.
        """
        spec = self._lookup(tool_id(self.name, tool))
        if spec is not None and not await self._gate.authorize(spec, arguments):
            raise ApprovalDeniedError(f"the user did not allow {spec.name} to run")
        return await self.inner.call_tool(tool, arguments)

    async def aclose(self) -> None:
        """Close the inner source."""
        await self.inner.aclose()


def install_approvals(toolspace: Toolspace, gate: ApprovalGate) -> None:
    """Wrap every source of ``toolspace`` (not yet wrapped) with an :class:`ApprovalToolSource`."""
    toolspace.wrap_sources(
        lambda source: (
            source
            if isinstance(source, ApprovalToolSource)
            else ApprovalToolSource(source, gate, toolspace.get_by_id)
        )
    )

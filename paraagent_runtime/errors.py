"""Exceptions raised by paraagent.

The tree::

    ParaAgentError
    ├── UserError                  misuse: bad configuration, bad arguments, unknown names
    │   ├── ConfigError            a config file or spec that cannot be used (names the field)
    │   ├── MissingExtraError      an optional dependency is not installed (names the extra)
    │   ├── InvalidSchemaError     a tool's input schema is not JSON Schema, even normalized
    │   └── UnknownToolError       a tool name the toolspace does not know
    └── RunError                   something failed while running
        ├── ModelAPIError          a policy backend is down, times out or answers garbage
        ├── ToolExecutionError     a tool source failed to execute a call
        └── MCPConnectionError     an MCP server could not be reached or died

Errors that happen *inside an episode* (a malformed turn, an invalid argument, a tool that hangs)
do not raise: they become typed error observations (:class:`paraagent_runtime.tools.ToolErrorKind`)
so the episode goes on. These exceptions are for callers of the library and for the CLI, which
prints them as one readable line.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "InvalidSchemaError",
    "MCPConnectionError",
    "MissingExtraError",
    "ModelAPIError",
    "ParaAgentError",
    "RunError",
    "ToolExecutionError",
    "UnknownToolError",
    "UserError",
]


class ParaAgentError(Exception):
    """Base class of every exception paraagent raises on purpose."""


class UserError(ParaAgentError):
    """The caller asked for something that cannot work (bad config, arguments or names)."""


class ConfigError(UserError):
    """A configuration file or spec string is invalid; the message names the offending field."""


class MissingExtraError(UserError):
    """An optional dependency is missing; the message names the extra that installs it.

    Attributes:
        extra: The extra's name, as in ``pip install 'paraagent[<extra>]'``.
    """

    def __init__(self, message: str, *, extra: str) -> None:
        super().__init__(message)
        self.extra = extra


class InvalidSchemaError(UserError):
    """A tool's input schema is not a valid JSON Schema of an object, even after normalization.

    Raised when a tool is registered; the toolspace lists the tool as unusable with the message.
    """


class UnknownToolError(UserError):
    """A tool name or id that no source of the toolspace provides."""


class RunError(ParaAgentError):
    """A failure while running an agent, a model or a tool."""


class ModelAPIError(RunError):
    """A policy backend failed: unreachable, timed out, or returned an unusable response."""


class ToolExecutionError(RunError):
    """A tool source raised while executing a call (wrapped into an error observation)."""


class MCPConnectionError(RunError):
    """An MCP server could not be started, reached, or died during a session."""

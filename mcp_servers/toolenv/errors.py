"""Exceptions the ToolEnv simulator raises; all are :class:`ToolExecutionError` subclasses.

The tree::

    ToolExecutionError (paraagent_runtime.errors)
    └── ToolEnvError
        ├── ToolEnvUnknownToolError     no record with that provider/tool
        ├── ToolEnvArgumentError        arguments fail the tool's input JSON Schema
        │                               (also a ValueError)
        ├── ToolEnvNotFoundError        a well-formed argument names nothing in the world
        │                               (city, flight…)
        └── ToolEnvTransientError       injected failures that a retry may fix
            ├── ToolEnvTimeoutError     the simulated upstream timed out (also a TimeoutError)
            ├── ToolEnvHTTPError        the simulated upstream answered 429 or 503
            └── ToolEnvTruncatedError   the simulated upstream cut its response body
"""

from __future__ import annotations

from paraagent_runtime import ToolExecutionError

__all__ = [
    "ToolEnvArgumentError",
    "ToolEnvError",
    "ToolEnvHTTPError",
    "ToolEnvNotFoundError",
    "ToolEnvTimeoutError",
    "ToolEnvTransientError",
    "ToolEnvTruncatedError",
    "ToolEnvUnknownToolError",
]


class ToolEnvError(ToolExecutionError):
    """Base class of every error the ToolEnv simulator raises on purpose."""


class ToolEnvUnknownToolError(ToolEnvError, KeyError):
    """The simulator has no record for ``provider/tool``."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ToolEnvArgumentError(ToolEnvError, ValueError):
    """The arguments do not satisfy the tool's input schema.

    Args:
        tool_id: The tool whose schema rejected the arguments.
        message: The runtime's validation message
            (:func:`paraagent_runtime.validation.validate_arguments`).

    Attributes:
        tool_id: The tool whose schema rejected the arguments.
    """

    def __init__(self, tool_id: str, message: str) -> None:
        self.tool_id = tool_id
        super().__init__(message)


class ToolEnvNotFoundError(ToolEnvError, LookupError):
    """A valid argument refers to an entity the simulated world does not contain."""


class ToolEnvTransientError(ToolEnvError):
    """An injected upstream failure; retrying the same call may succeed."""


class ToolEnvTimeoutError(ToolEnvTransientError, TimeoutError):
    """The simulated upstream did not answer in time."""


class ToolEnvHTTPError(ToolEnvTransientError):
    """The simulated upstream answered with an HTTP error status (429 or 503).

    Attributes:
        status: The HTTP status code.
        retry_after_s: The ``Retry-After`` hint in seconds (429 only), else ``None``.
    """

    def __init__(self, status: int, message: str, *, retry_after_s: float | None = None) -> None:
        self.status = status
        self.retry_after_s = retry_after_s
        super().__init__(f"HTTP {status}: {message}")


class ToolEnvTruncatedError(ToolEnvTransientError):
    """The simulated upstream cut the response body; ``partial`` holds what arrived."""

    def __init__(self, tool_id: str, partial: str, total_chars: int) -> None:
        self.partial = partial
        self.total_chars = total_chars
        super().__init__(
            f"{tool_id}: response truncated after {len(partial)} of {total_chars} characters: "
            f"{partial}"
        )

"""Episode records and their JSONL files (append-only, one episode per line, flushed per episode).

Records carry token ids and log-probs when the policy backend returns them, so the trainer can
consume rollouts token-in-token-out without re-tokenizing text.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import time
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError

from .actions import FormatError, Phase
from .errors import ConfigError
from .policy.base import Message
from .tools import ToolCall, ToolResult

__all__ = [
    "Episode",
    "EpisodeSink",
    "EpisodeStatus",
    "TrajectoryWriter",
    "TurnRecord",
    "read_episodes",
    "read_jsonl_lines",
]

logger = logging.getLogger(__name__)

EpisodeStatus = Literal["answered", "max_turns", "repeating", "error", "cancelled", "interrupted"]
"""How an episode ended.

``repeating``: its last turns made the same calls and got the same results
(:attr:`~paraagent_runtime.AgentConfig.max_repeated_turns`); ``interrupted``: the user stopped
the run (Ctrl-C in ``paraagent run``).
"""


class TurnRecord(BaseModel):
    """One assistant turn with its calls, results and (when available) tokens."""

    index: int
    text: str
    phase: Phase | None = None
    phase_inferred: bool = False
    calls: list[ToolCall] = Field(default_factory=list)
    results: list[ToolResult] = Field(default_factory=list)
    format_errors: list[FormatError] = Field(default_factory=list)
    answer: str | None = None
    observation: str | None = None
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    model_latency_s: float = 0.0
    tools_latency_s: float = 0.0


class Episode(BaseModel):
    """A whole run of the agent on one task.

    ``prefetched_tools`` are the tools the runtime loaded from the task's text before the first
    turn (:attr:`~paraagent_runtime.agent.AgentConfig.prefetch_tools`), best first.
    """

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    task_id: str | None = None
    task: str
    mode: str = "paraact"
    model: str = ""
    messages: list[Message] = Field(default_factory=list)
    turns: list[TurnRecord] = Field(default_factory=list)
    prefetched_tools: list[str] = Field(default_factory=list)
    answer: str | None = None
    status: EpisodeStatus = "answered"
    error: str | None = None
    started_at: float = Field(default_factory=time.time)
    duration_s: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def n_calls(self) -> int:
        """All tool calls the model issued (meta-tools included)."""
        return sum(len(turn.calls) for turn in self.turns)

    def phase_counts(self) -> dict[str, int]:
        """Number of turns per phase (``explore``, ``execute``, ``answer``)."""
        counts = {"explore": 0, "execute": 0, "answer": 0}
        for turn in self.turns:
            if turn.calls and turn.phase:
                counts[turn.phase] += 1
            elif turn.answer is not None:
                counts["answer"] += 1
        return counts


class EpisodeSink(Protocol):
    """Where finished episodes go: a :class:`TrajectoryWriter`, or a caller's wrapper of one."""

    def write(self, episode: Episode) -> None:
        """Keep one finished episode."""
        ...


class TrajectoryWriter:
    """Appends episodes to a JSONL file.

    Each write is flushed and fsynced, so a crash loses nothing. Writes are synchronous and small
    (one line per episode), so a writer can be shared by the episodes of one event loop. The file
    is created by the first write: a run stopped before its first episode leaves no empty file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None

    def write(self, episode: Episode) -> None:
        """Append one episode synchronously."""
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(episode.model_dump_json() + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file (if an episode was written)."""
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


_DAMAGED_TEXT = (EOFError, UnicodeDecodeError, zlib.error, gzip.BadGzipFile)
"""What reading a JSON-lines file raises when its bytes are not (or stop being) gzipped UTF-8."""


def read_jsonl_lines(
    path: str | os.PathLike[str], *, strict: bool = True
) -> Iterator[tuple[int, str]]:
    """The non-blank lines of a JSON-lines file with their numbers (from 1), gunzipped for ``.gz``.

    Raises:
        ConfigError: the file cannot be opened, or its bytes are not readable text (a gzip
            stream that is damaged or cut short, bytes that are not UTF-8). When ``strict`` is
            false a damaged stream ends the lines with a warning instead, after those before it
            (a killed run's gzipped file keeps its finished records).
    """
    path = Path(path)
    number = 0
    try:
        with (
            gzip.open(path, "rt", encoding="utf-8")
            if path.suffix == ".gz"
            else path.open(encoding="utf-8")
        ) as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line
    except _DAMAGED_TEXT as exc:
        message = f"{path}: unreadable after line {number} ({exc})"
        if strict:
            raise ConfigError(message) from exc
        logger.warning(message)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from exc


def read_episodes(path: str | os.PathLike[str], *, strict: bool = False) -> Iterator[Episode]:
    """Read episodes back from a JSONL trajectory file (gzipped when its name ends in ``.gz``).

    A malformed line (for instance the partial last line of a killed run) or a damaged gzip
    tail is skipped with a warning, or raises :class:`ConfigError` naming the line when
    ``strict`` is true; a file that cannot be opened raises :class:`ConfigError` either way.
    """
    for number, line in read_jsonl_lines(path, strict=strict):
        try:
            yield Episode.model_validate(json.loads(line))
        except (ValueError, ValidationError) as exc:
            message = f"{path}:{number}: not an episode record ({str(exc).splitlines()[0]})"
            if strict:
                raise ConfigError(message) from exc
            logger.warning(message)

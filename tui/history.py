"""Chat history: each conversation is a JSONL file of episodes in the history directory.

Episodes are written by the agent's :class:`~paraagent_runtime.trajectory.TrajectoryWriter` as
they finish (cancelled ones too), so a crash or restart loses nothing; a conversation is resumed by
loading its file and appending to it.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from paraagent_runtime import ConfigError, Episode, TrajectoryWriter, read_episodes

__all__ = ["ChatHistory", "default_history_dir"]


def default_history_dir() -> Path:
    """``$XDG_DATA_HOME/paraagent/history`` (``~/.local/share/paraagent/history`` by default)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "paraagent" / "history"


class ChatHistory:
    """The conversation files of one history directory and the one being written.

    Args:
        directory: where conversation files live (created on first write).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.current: Path | None = None
        self._writer: TrajectoryWriter | None = None

    def sessions(self) -> list[Path]:
        """Conversation files, most recently written first."""
        if not self.directory.is_dir():
            return []
        files = [path for path in self.directory.glob("chat-*.jsonl") if path.is_file()]
        return sorted(files, key=lambda path: path.stat().st_mtime_ns, reverse=True)

    def writer(self) -> TrajectoryWriter:
        """The writer of the current conversation (its file is created on first use)."""
        if self._writer is None:
            if self.current is None:
                stamp = time.strftime("%Y%m%d-%H%M%S")
                self.current = self.directory / f"chat-{stamp}-{uuid.uuid4().hex[:6]}.jsonl"
            self._writer = TrajectoryWriter(self.current)
        return self._writer

    def new_conversation(self) -> None:
        """Start writing a new file on the next episode."""
        self.close()
        self.current = None

    def episodes(self) -> list[Episode]:
        """The episodes of the current conversation so far."""
        if self.current is None or not self.current.exists():
            return []
        return list(read_episodes(self.current))

    def resolve(self, name: str | None) -> Path:
        """The file meant by ``name``: a path, a file of the history directory, or the latest.

        Raises:
            ConfigError: nothing matches.
        """
        if not name:
            sessions = self.sessions()
            if not sessions:
                raise ConfigError(f"no saved conversations in {self.directory}")
            return sessions[0]
        path = Path(name).expanduser()
        for candidate in (path, self.directory / name, self.directory / f"{name}.jsonl"):
            if candidate.is_file():
                return candidate
        raise ConfigError(f"no conversation file {name!r} (looked in . and {self.directory})")

    def resume(self, name: str | None) -> list[Episode]:
        """Load a conversation and continue it: later episodes are appended to its file.

        A file outside the history directory is copied into a new conversation file first.

        Raises:
            ConfigError: the file does not exist or holds no episode.
        """
        path = self.resolve(name)
        episodes = list(read_episodes(path))
        if not episodes:
            raise ConfigError(f"{path} holds no episode records")
        self.new_conversation()
        if path.resolve().parent == self.directory.resolve():
            self.current = path
        else:
            writer = self.writer()
            for episode in episodes:
                writer.write(episode)
        return episodes

    def export(self, path: Path) -> int:
        """Write the current conversation's episodes to ``path``; return how many.

        Raises:
            ConfigError: there is nothing to save, or ``path`` cannot be written.
        """
        episodes = self.episodes()
        if not episodes:
            raise ConfigError("nothing to save yet: the conversation has no episode")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(e.model_dump_json() + "\n" for e in episodes), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc
        return len(episodes)

    def close(self) -> None:
        """Close the current file."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

"""Checking that a LoRA adapter directory holds its weights, and saying where archived ones are.

Adapters kept as results (``docs/results/adapters/``) may keep only their cards and configs in the
working tree, their weights living in git history: a repository that a lease machine or a user
copies stays small. Such a directory holds :data:`ARCHIVE_NOTE`, whose first line is the commit
that still has the weights; loading it without them fails with the command that restores them,
instead of peft's message about a missing file.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError

__all__ = ["ARCHIVE_NOTE", "WEIGHT_FILES", "adapter_load_errors", "check_adapter_weights"]

WEIGHT_FILES: tuple[str, ...] = ("adapter_model.safetensors", "adapter_model.bin")
"""The names peft saves an adapter's weights under."""

ARCHIVE_NOTE = "WEIGHTS_ARCHIVED"
"""A file beside an archived adapter's config: its first line is the commit holding the weights."""


def check_adapter_weights(adapter: Path) -> None:
    """Raise ConfigError if the adapter directory ``adapter`` holds no weight file.

    A directory with an :data:`ARCHIVE_NOTE` gets the ``git restore`` command that brings the
    weights back; any other gets the names that were looked for.
    """
    if any((adapter / name).is_file() for name in WEIGHT_FILES):
        return
    note = adapter / ARCHIVE_NOTE
    if note.is_file():
        words = note.read_text(encoding="utf-8").split()
        if words:
            raise ConfigError(
                f"the weights of the adapter {adapter} are archived in git history; restore them "
                f"with `git restore --source={words[0]} -- {adapter / WEIGHT_FILES[0]}`"
            )
    raise ConfigError(f"the adapter {adapter} holds no weights (no {' or '.join(WEIGHT_FILES)})")


def adapter_load_errors() -> tuple[type[Exception], ...]:
    """The exceptions peft raises for a broken adapter directory, reported as ConfigError.

    A config without ``peft_type`` is a KeyError, a damaged weight file safetensors' own error.
    """
    from safetensors import SafetensorError

    return (OSError, ValueError, KeyError, SafetensorError)

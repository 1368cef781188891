"""Command groups whose sub-commands load on first use, so ``paraagent --help`` stays fast.

A :class:`LazyGroup` knows each lazy sub-command by name, a ``"module:attr"`` target and a
one-line help; it imports the target only when the command runs (or its own ``--help`` is
asked for), never to list the names. A target is a :class:`typer.Typer` (a sub-app, always a
group) or a typer-annotated command function. A missing optional dependency, while loading or
running a command, becomes a :class:`~paraagent_runtime.errors.MissingExtraError` naming the
extra.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, ClassVar

import typer

# typer >= 0.29 vendors click as ``typer._click``; its exceptions are not ``click``'s.
from typer._click import Command, Context
from typer._click.exceptions import UsageError
from typer.core import TyperCommand, TyperGroup

from ..errors import MissingExtraError

__all__ = ["EXTRAS", "LazyCommand", "LazyGroup", "extra_for", "lazy_group"]

_LISTING = "paraagent.listing"

EXTRAS: Mapping[str, str] = {
    "textual": "tui",
    "faiss": "retrieval",
    "sentence_transformers": "retrieval",
    "bm25s": "retrieval",
    "onnxruntime": "retrieval",
    "numpy": "local",
    "torch": "local",
    "transformers": "local",
    "accelerate": "local",
    "gguf": "local",
    "peft": "local",
    "onnxruntime_genai": "local",
    "trl": "train",
    "datasets": "train",
    "yaml": "train",
    "matplotlib": "train",
    "botocore": "toolenv",
    "googleapiclient": "toolenv",
    "vllm": "vllm",
}
"""The extra that provides each optional top-level module (``import`` name → extra).

A command wholly behind one extra (``index``: ``retrieval``) declares it instead, since some
modules (numpy) come with several extras.
"""


def extra_for(error: ImportError, declared: str | None = None) -> str | None:
    """The extra whose absence caused ``error``, or ``None`` when it is not a missing extra.

    Args:
        error: The failed import.
        declared: The extra the failing command declares, if any; it wins over :data:`EXTRAS`.
    """
    name = (getattr(error, "name", None) or "").partition(".")[0]
    if name not in EXTRAS:
        return None
    return declared or EXTRAS[name]


@dataclass(frozen=True)
class LazyCommand:
    """A sub-command known by name before its module is imported.

    Attributes:
        target: ``"package.module:attr"``: a :class:`typer.Typer` or a command function.
        help: The one-line help listed by the parent's ``--help``.
        extra: The extra the whole command needs, named when an optional module is missing
            (default: the extra of the missing module, :data:`EXTRAS`).
    """

    target: str
    help: str
    extra: str | None = None


class LazyGroup(TyperGroup):
    """A typer group that imports its lazy sub-commands only when they are used.

    Subclasses set :attr:`lazy_commands` (see :func:`lazy_group`); eagerly added commands
    (typer's ``add_typer``/``command``) keep working and are listed first.
    """

    lazy_commands: ClassVar[Mapping[str, LazyCommand]] = {}

    def list_commands(self, ctx: Context) -> list[str]:
        """Eager commands in creation order, then the lazy ones in declaration order."""
        eager = super().list_commands(ctx)
        return eager + [name for name in self.lazy_commands if name not in self.commands]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """The command, importing a lazy one unless the caller only lists help."""
        command = super().get_command(ctx, cmd_name)
        lazy = self.lazy_commands.get(cmd_name)
        if command is not None or lazy is None:
            return command
        if ctx.meta.get(_LISTING):
            # A stand-in carrying the name and help, so listing imports nothing.
            return TyperCommand(cmd_name, help=lazy.help, short_help=lazy.help)
        try:
            command = _load(cmd_name, lazy)
        except ImportError as exc:
            extra = extra_for(exc, lazy.extra)
            if extra is None:
                raise
            raise _missing_extra(f"{ctx.command_path} {cmd_name}", extra) from exc
        self.commands[cmd_name] = command
        return command

    def get_help_option(self, ctx: Context) -> Any:
        """Typer's ``--help`` option, absent as ``False`` rather than ``None``.

        Typer coerces a ``None`` flag through pydantic (0.1 s of imports on every start) but
        passes a bool through, so a sub-command's ``--help`` stays fast.
        """
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option

    def format_help(self, ctx: Context, formatter: Any) -> None:
        """The group's help; lazy commands are listed from their declared one-line help."""
        ctx.meta[_LISTING] = True
        try:
            super().format_help(ctx, formatter)
        finally:
            ctx.meta.pop(_LISTING, None)

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        """Resolve like typer, suggesting close lazy names as well on a typo."""
        try:
            return self._click_resolve_command(ctx, args)
        except UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches:
                exc.message = (
                    f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
                )
            raise

    def invoke(self, ctx: Context) -> Any:
        """Run the sub-command; an import of a missing extra becomes one line naming it."""
        try:
            return super().invoke(ctx)
        except ImportError as exc:
            lazy = self.lazy_commands.get(ctx.invoked_subcommand or "")
            extra = extra_for(exc, lazy.extra if lazy else None)
            if extra is None:
                raise
            path = " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))
            raise _missing_extra(path, extra) from exc


def lazy_group(commands: Mapping[str, LazyCommand]) -> type[LazyGroup]:
    """A :class:`LazyGroup` class (for ``typer.Typer(cls=...)``) with these lazy commands."""
    return type("LazyGroup", (LazyGroup,), {"lazy_commands": dict(commands)})


def _load(name: str, lazy: LazyCommand) -> Command:
    module_name, _, attr = lazy.target.partition(":")
    target = getattr(importlib.import_module(module_name), attr)
    if isinstance(target, typer.Typer):
        command: Command = typer.main.get_group(target)
    else:
        holder = typer.Typer(add_completion=False, rich_markup_mode=None)
        holder.command(name, short_help=lazy.help)(target)
        command = typer.main.get_command(holder)
    command.name = name
    command.short_help = command.short_help or lazy.help
    return command


def _missing_extra(command_path: str, extra: str) -> MissingExtraError:
    return MissingExtraError(
        f"{command_path} needs the {extra!r} extra: pip install 'paraagent[{extra}]'", extra=extra
    )

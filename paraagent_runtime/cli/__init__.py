"""The ``paraagent`` command line: the composition root that wires runtime, ToolEnv and the rest.

Misuse never ends in a traceback: a usage error is one ``error:`` line naming the command's
``--help`` (exit 2), a library error (:class:`paraagent_runtime.errors.ParaAgentError`) one
``error:`` line (2 for :class:`~paraagent_runtime.errors.UserError`, else 1), Ctrl-C exit 130.
Sub-apps load lazily (:mod:`paraagent_runtime.cli.lazy`), so ``--help`` imports nothing heavy.
"""

from __future__ import annotations

import sys

import typer

# typer >= 0.29 vendors click as ``typer._click``: these, not ``click``'s, are what it raises.
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from ..errors import ParaAgentError, UserError
from .app import app

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (2 for misuse, 1 for run failures, 130 on Ctrl-C).

    Args:
        argv: The arguments after the program name (default: ``sys.argv[1:]``).
    """
    try:
        result = typer.main.get_command(app).main(
            args=argv, prog_name="paraagent", standalone_mode=False
        )
    except NoArgsIsHelpError as exc:
        # Rich help is printed while the error is raised; plain help is its message.
        if exc.format_message().strip():
            typer.echo(exc.format_message())
        return 0
    except UsageError as exc:
        _usage_error(exc)
        return 2
    except ClickException as exc:
        _error_line(exc.format_message())
        return exc.exit_code
    except ParaAgentError as exc:
        _error_line(str(exc))
        return 2 if isinstance(exc, UserError) else 1
    except typer.Exit as exc:
        return exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        _error_line("interrupted")
        return 130
    return result if isinstance(result, int) else 0


def _error_line(message: str) -> None:
    typer.echo(f"error: {' '.join(message.split())}", err=True)


def _usage_error(exc: UsageError) -> None:
    hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
    _error_line(f"{exc.format_message().rstrip('.')}{hint}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

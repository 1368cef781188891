"""The ``paraagent`` command line: the composition root that wires runtime, ToolEnv and the rest.

Library errors (:class:`paraagent_runtime.errors.ParaAgentError`) become one readable line on
stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.markup import escape

from ..errors import ParaAgentError, UserError
from .app import app

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (2 for misuse, 1 for run failures, 130 on Ctrl-C)."""
    console = Console(stderr=True)
    try:
        result = app(args=argv, standalone_mode=False, prog_name="paraagent")
    except ParaAgentError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2 if isinstance(exc, UserError) else 1
    except click.exceptions.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        console.print("interrupted")
        return 130
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

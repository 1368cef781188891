"""``python -m training.sft --config …``: SFT entry point for ``accelerate launch`` (multi-GPU)."""

from __future__ import annotations

import typer

from ..cli import sft_command

if __name__ == "__main__":
    typer.run(sft_command)

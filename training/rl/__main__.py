"""``python -m training.rl`` (e.g. under ``accelerate launch``): ``paraagent train rl``."""

from __future__ import annotations

from .cli import rl_app

if __name__ == "__main__":
    rl_app(prog_name="python -m training.rl")

"""Fixtures: stdio server configs for real child processes, and a loopback HTTP server."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from paraagent_runtime.mcp import MCPServerConfig

HERE = Path(__file__).parent


def stdio_config(*args: str, **kwargs: object) -> MCPServerConfig:
    """A stdio config running this interpreter with ``args``."""
    return MCPServerConfig.model_validate({"type": "stdio", "command": sys.executable, "args": list(args), **kwargs})


def child_pids() -> list[int]:
    """Direct child processes of the test process (Linux /proc)."""
    pids: list[int] = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with open(f"/proc/{os.getpid()}/task/{task}/children") as handle:
            pids.extend(int(pid) for pid in handle.read().split())
    return pids


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False

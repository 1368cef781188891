"""Fixtures: stdio server configs for real child processes, and a loopback HTTP server."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from paraagent_runtime.mcp import MCPServerConfig

HERE = Path(__file__).parent


def stdio_config(*args: str, **kwargs: object) -> MCPServerConfig:
    """A stdio config running this interpreter with ``args``."""
    return MCPServerConfig.model_validate(
        {"type": "stdio", "command": sys.executable, "args": list(args), **kwargs}
    )


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


class LoopbackServer:
    """A uvicorn server running an ASGI app on 127.0.0.1 (free port) in the test's loop."""

    def __init__(self, app: object) -> None:
        import uvicorn

        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        return self.server.servers[0].sockets[0].getsockname()[1]

    async def __aenter__(self) -> LoopbackServer:
        self._task = asyncio.create_task(self.server.serve())
        while not self.server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.02)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.server.should_exit = True
        assert self._task is not None
        await asyncio.wait_for(self._task, 10)

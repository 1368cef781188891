"""A small real toolspace of in-process tools, scripted turns, and an app factory."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from paraagent_runtime.agent import AgentConfig
from paraagent_runtime.mcp.config import MCPServerConfig
from paraagent_runtime.mcp.source import MCPToolSource
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.progress import report_progress
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.tools import ToolAnnotations
from paraagent_runtime.toolspace import Toolspace
from tui.app import ChatApp

SIZE = (120, 40)


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def turn(phase: str, *calls: str, think: str = "") -> str:
    prefix = f"<think>{think}</think>" if think else ""
    return f"{prefix}<phase>{phase}</phase>" + "".join(calls)


def answer(text: str) -> str:
    return f"<answer>{text}</answer>"


class Hang:
    """A tool that reports progress, waits until cancelled and records that it was."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def run(self, seconds: float = 3600) -> str:
        await report_progress(1, 4, "waiting for the file")
        self.started.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "woke up"


class Deleted:
    def __init__(self) -> None:
        self.paths: list[str] = []

    async def run(self, path: str) -> dict[str, Any]:
        self.paths.append(path)
        return {"deleted": path}


@pytest.fixture
def hang() -> Hang:
    return Hang()


@pytest.fixture
def deleted() -> Deleted:
    return Deleted()


@pytest.fixture
def sources(hang: Hang, deleted: Deleted) -> list[Any]:
    async def forecast(city: str) -> dict[str, Any]:
        return {"city": city, "temp_c": len(city) * 3, "sky": "clear"}

    async def distance(origin: str, destination: str) -> dict[str, Any]:
        return {"km": abs(len(origin) - len(destination)) * 100 + 340}

    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    route = {
        "type": "object",
        "properties": {"origin": {"type": "string"}, "destination": {"type": "string"}},
        "required": ["origin", "destination"],
    }
    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    read_only = ToolAnnotations(read_only=True)
    return [
        FunctionToolSource(
            "weather",
            [
                FunctionTool(
                    forecast,
                    description="Weather forecast for a city.",
                    input_schema=city,
                    annotations=read_only,
                )
            ],
        ),
        FunctionToolSource(
            "maps",
            [
                FunctionTool(
                    distance,
                    description="Road distance between two cities.",
                    input_schema=route,
                    annotations=read_only,
                )
            ],
        ),
        FunctionToolSource(
            "files",
            [
                FunctionTool(
                    deleted.run,
                    name="delete",
                    description="Delete a file.",
                    input_schema=path,
                    annotations=ToolAnnotations(destructive=True),
                ),
                FunctionTool(
                    hang.run,
                    name="wait",
                    description="Wait for a file to appear.",
                    input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
                ),
            ],
        ),
    ]


@pytest.fixture
def broken_source() -> MCPToolSource:
    """A real MCP stdio source whose server cannot start."""
    return MCPToolSource(
        "ghost", MCPServerConfig(type="stdio", command="/nonexistent/mcp-ghost-server")
    )


AppFactory = Callable[..., ChatApp]


@pytest.fixture
def make_app(tmp_path: Path, sources: list[Any]) -> AppFactory:
    def build(
        turns: Sequence[str] = (),
        *,
        extra_sources: Sequence[Any] = (),
        history_dir: Path | None = None,
        **kwargs: Any,
    ) -> ChatApp:
        kwargs.setdefault("agent_config", AgentConfig(max_turns=6))
        return ChatApp(
            policy=ScriptedPolicy(list(turns)),
            toolspace=Toolspace([*sources, *extra_sources]),
            history_dir=history_dir or tmp_path / "history",
            **kwargs,
        )

    return build


async def submit(pilot: Any, text: str) -> None:
    """Type ``text`` in the prompt and press Enter."""
    pilot.app.query_one("#prompt").value = text
    await pilot.press("enter")
    await pilot.pause()


async def settle(pilot: Any) -> None:
    """Wait for every worker and the messages they posted."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()

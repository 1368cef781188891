"""A small real toolspace of in-process tools, scripted turns, and an app factory."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from paraagent_runtime.agent import AgentConfig
from paraagent_runtime.mcp.config import MCPServerConfig
from paraagent_runtime.mcp.source import MCPToolSource
from paraagent_runtime.policy.base import Completion, Policy
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.progress import report_progress
from paraagent_runtime.sources import FunctionTool, FunctionToolSource
from paraagent_runtime.tools import ToolAnnotations
from paraagent_runtime.toolspace import Toolspace
from tui.app import ChatApp

SIZE = (120, 40)
NARROW, WIDE = (80, 24), (160, 50)


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def turn(phase: str, *calls: str, think: str = "") -> str:
    prefix = f"<think>{think}</think>" if think else ""
    return f"{prefix}<phase>{phase}</phase>" + "".join(calls)


def answer(text: str) -> str:
    return f"<answer>{text}</answer>"


class GatedPolicy(Policy):
    """A scripted policy that streams each turn word by word, and holds the turns in ``hold``.

    A held turn has streamed its text and waits for ``release`` before it completes, so a test
    can look at the screen while the "model" is still thinking.
    """

    name = "gated"

    def __init__(self, turns: Sequence[str], *, hold: Sequence[int] = ()) -> None:
        self.turns = list(turns)
        self.hold = set(hold)
        self.calls = 0
        self.waiting = asyncio.Event()
        self.release = asyncio.Event()

    async def complete(self, messages: Any, *, on_text: Any = None, **_: Any) -> Completion:
        index = self.calls
        self.calls += 1
        text = self.turns[index]
        for piece in re.findall(r"\S+\s*", text):
            result = on_text(piece) if on_text is not None else None
            if inspect.isawaitable(result):
                await result
            await asyncio.sleep(0)
        if index in self.hold:
            self.waiting.set()
            await self.release.wait()
            self.release.clear()
            self.waiting.clear()
        return Completion(text=text)


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
        turns: Sequence[str] | Policy = (),
        *,
        extra_sources: Sequence[Any] = (),
        history_dir: Path | None = None,
        **kwargs: Any,
    ) -> ChatApp:
        kwargs.setdefault("agent_config", AgentConfig(max_turns=6))
        return ChatApp(
            policy=turns if isinstance(turns, Policy) else ScriptedPolicy(list(turns)),
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


def visible(widget: Any) -> bool:
    """True when all of ``widget`` is inside the conversation's viewport."""
    region = widget.region
    return bool(region.area) and widget.app.conversation.region.contains_region(region)


async def settle(pilot: Any) -> None:
    """Wait for every worker and the messages they posted."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()

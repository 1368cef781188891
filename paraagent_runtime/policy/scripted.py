"""A deterministic policy that replays a script: the test double for agents, servers and users.

Like pydantic-ai's ``FunctionModel``, it ships in the package so users can test their own agent
setups without a model::

    policy = ScriptedPolicy([
        '<phase>explore</phase>'
        '<tool_call>{"name": "search_tools", "arguments": {"query": "x"}}</tool_call>',
        "<answer>done</answer>",
    ])
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ModelAPIError
from ._callbacks import emit_text
from .base import Completion, Message, Policy, SamplingParams, TextCallback

__all__ = ["ScriptFunction", "ScriptedPolicy"]

ScriptFunction = Callable[[Sequence[Message]], "str | Completion | Awaitable[str | Completion]"]


class ScriptedPolicy(Policy):
    """Answers each call with the next scripted turn.

    Args:
        turns: either a sequence of turns (text, or whole :class:`Completion` objects, e.g. with
            structured ``tool_calls``) returned in order, or a function of the conversation that
            returns the turn (plain or async).
        model: the model name reported in each completion.
        chunk_size: when ``on_text`` is given, the text is streamed in chunks of this many
            characters, as a streaming backend would.

    Attributes:
        calls: the conversations the policy was called with, in call order (copies).
        tools_seen: the ``tools`` argument of each call, in call order.
    """

    name = "scripted"

    def __init__(
        self,
        turns: Sequence[str | Completion] | ScriptFunction,
        *,
        model: str = "scripted",
        chunk_size: int = 16,
    ) -> None:
        if isinstance(turns, str):
            raise ConfigError(
                "ScriptedPolicy(turns=...) needs a list of turns or a function, not one string"
            )
        if chunk_size < 1:
            raise ConfigError(f"ScriptedPolicy(chunk_size=...) must be >= 1, got {chunk_size}")
        self._function: ScriptFunction | None = turns if callable(turns) else None
        self._turns: list[str | Completion] = [] if callable(turns) else list(turns)
        self._model = model
        self._chunk_size = chunk_size
        self.calls: list[list[Message]] = []
        self.tools_seen: list[list[dict[str, Any]] | None] = []

    @classmethod
    def from_jsonl(cls, path: str | Path, **kwargs: Any) -> ScriptedPolicy:
        """Load a script from a JSONL file: one turn per line, a JSON string or a Completion object.

        Raises:
            ConfigError: the file is missing or a line is neither a string nor a completion.
        """
        path = Path(path)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read the script {path}: {exc.strerror or exc}") from exc
        turns: list[str | Completion] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
                turns.append(value if isinstance(value, str) else Completion.model_validate(value))
            except ValueError as exc:
                reason = str(exc).splitlines()[0]
                raise ConfigError(
                    f"{path}:{number}: each line must be a JSON string or a completion object "
                    f"({reason})"
                ) from exc
        return cls(turns, **kwargs)

    @property
    def remaining(self) -> int | None:
        """How many scripted turns are left (``None`` for a function script)."""
        return None if self._function is not None else len(self._turns) - len(self.calls)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: SamplingParams | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_text: TextCallback | None = None,
    ) -> Completion:
        """Return the next scripted turn; stream it through ``on_text`` when given.

        Raises:
            ModelAPIError: the script is exhausted, or the script function raised or returned
                something that is not a turn.
        """
        index = len(self.calls)
        self.calls.append([message.model_copy(deep=True) for message in messages])
        self.tools_seen.append([dict(tool) for tool in tools] if tools is not None else None)
        turn = await self._next_turn(messages, index)
        completion = turn if isinstance(turn, Completion) else Completion(text=turn)
        completion = completion.model_copy(
            update={
                "model": completion.model or self._model,
                "finish_reason": completion.finish_reason
                or ("tool_calls" if completion.tool_calls else "stop"),
            }
        )
        if on_text is not None:
            for start in range(0, len(completion.text), self._chunk_size):
                await emit_text(on_text, completion.text[start : start + self._chunk_size])
                await asyncio.sleep(0)
        return completion

    async def _next_turn(self, messages: Sequence[Message], index: int) -> str | Completion:
        if self._function is None:
            if index >= len(self._turns):
                raise ModelAPIError(
                    f"the scripted policy has no turn left (call #{index + 1}, script has "
                    f"{len(self._turns)})"
                )
            return self._turns[index]
        try:
            turn = self._function(list(messages))
            if inspect.isawaitable(turn):
                turn = await turn
        except ModelAPIError:
            raise
        except Exception as exc:
            raise ModelAPIError(
                f"the script function failed on call #{index + 1}: {exc!r}"
            ) from exc
        if not isinstance(turn, str | Completion):
            raise ModelAPIError(
                f"the script function must return a str or Completion, got {type(turn).__name__}"
            )
        return turn

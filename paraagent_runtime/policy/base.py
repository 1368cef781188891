"""The policy protocol: given the conversation so far, produce the next assistant turn.

Every backend (OpenAI-compatible HTTP, local transformers, in-process vLLM, scripted) returns a
:class:`Completion`; backends that can, fill in token ids and log-probs so training gets
token-in-token-out trajectories.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Self

from pydantic import BaseModel, Field

from .constrained import TurnFormat

__all__ = ["Completion", "Message", "Policy", "SamplingParams", "TextCallback"]

TextCallback = Callable[[str], Awaitable[None] | None]
Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    """One chat message. Tool observations are one ``tool`` message per turn."""

    role: Role
    content: str
    tool_calls: list[dict[str, Any]] | None = None


class SamplingParams(BaseModel):
    """Decoding settings shared by all backends.

    ``turn_format`` describes what the turn may contain (the agent sets it each turn); local
    backends that constrain their decoding (see :mod:`.constrained`) follow it, others ignore it.
    """

    max_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    stop: list[str] = Field(default_factory=list)
    seed: int | None = None
    turn_format: TurnFormat | None = None


class Completion(BaseModel):
    """One generated assistant turn.

    ``tool_calls`` holds structured calls when the backend returned them (OpenAI format);
    otherwise the calls are in ``text``. ``prompt_token_ids``/``token_ids``/``logprobs`` are filled
    by backends that expose tokens (local transformers, vLLM, servers that return log-probs).
    """

    text: str
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: str | None = None
    prompt_token_ids: list[int] | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    latency_s: float = 0.0


class Policy(ABC):
    """Base class of policy backends.

    Subclasses implement :meth:`complete`. ``tools`` are OpenAI-format function specs of the
    currently loaded tools, for backends whose chat template renders them; the ParaAct system
    prompt already lists them.
    """

    name: str = "policy"

    @abstractmethod
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: SamplingParams | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_text: TextCallback | None = None,
    ) -> Completion:
        """Generate the next assistant turn. Raises ``ModelAPIError`` when the backend fails.

        When ``on_text`` is given, streaming backends call it with each text delta as it arrives;
        the returned completion always holds the whole turn.
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release the backend's resources (sessions, models)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

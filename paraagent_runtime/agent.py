"""The agent loop: ask the policy for a turn, run its calls in parallel, feed back the results.

One loop serves the three agent modes of DESIGN §3 — ``paraact`` (phases, parallel calls),
``react`` (one call per turn) and ``decoupled`` (explore in turns of their own until the first
execute turn, never again). The loop emits typed events as it goes and always finishes its
:class:`Episode` — answered, out of turns, failed or cancelled — and writes it when a trajectory
writer is given.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .actions import (
    Turn,
    infer_phase,
    parse_turn,
    render_observations,
    render_turn,
    turn_from_openai,
)
from .dispatch import DispatchConfig, Dispatcher
from .errors import ConfigError, ParaAgentError
from .events import (
    AgentEvent,
    AnswerEvent,
    CallFinished,
    CallProgress,
    CallStarted,
    EpisodeFinished,
    ErrorEvent,
    PhaseEvent,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from .meta import META_TOOLS
from .modes import (
    DEFAULT_MAX_REPEATED_TURNS,
    DEFAULT_MAX_TURNS,
    DEFAULT_MODE,
    MODES,
    AgentMode,
    check_max_repeated_turns,
)
from .policy.base import Completion, Message, Policy, SamplingParams
from .policy.constrained import ToolSchema, TurnFormat
from .prompts import system_prompt
from .repetition import RepeatCounter
from .tools import ToolCall, ToolErrorKind, ToolResult
from .toolspace import ToolSession, Toolspace
from .trajectory import Episode, EpisodeSink, TurnRecord

__all__ = ["Agent", "AgentConfig", "EventCallback"]

logger = logging.getLogger(__name__)

EventCallback = Callable[[AgentEvent], Awaitable[None] | None]


@dataclass
class AgentConfig:
    """How the agent runs an episode.

    Attributes:
        mode: ``paraact`` (default), ``react`` (one call per turn) or ``decoupled`` (explore,
            then execute, never back).
        max_turns: turns before the episode ends with status ``max_turns``.
        max_repeated_turns: consecutive turns with the same calls (names and arguments) and the
            same results after which the episode ends with status ``repeating``; 0 never stops
            (e.g. for a tool polled until its answer changes).
        dispatch: per-call timeout, concurrency limits, K_max, truncation (react forces K_max=1).
        sampling: decoding settings passed to the policy.
        strict: parse turns strictly (training) instead of salvaging (serving).
        pass_tool_schemas: also send the loaded tools as OpenAI ``tools`` to the backend.
        system_prompt_extra: text appended to the system prompt.
        prefetch_tools: before the first turn, search the toolspace with the task's text and
            load the best N tools, listed with their schemas in the system prompt (0: none; the
            meta-tools stay, so the model can still search). Retrieval on the whole request
            finds tools the policy would not know to ask for (held-out tools and categories).
    """

    mode: AgentMode = DEFAULT_MODE
    max_turns: int = DEFAULT_MAX_TURNS
    max_repeated_turns: int = DEFAULT_MAX_REPEATED_TURNS
    dispatch: DispatchConfig = field(default_factory=DispatchConfig)
    sampling: SamplingParams = field(default_factory=SamplingParams)
    strict: bool = False
    pass_tool_schemas: bool = False
    system_prompt_extra: str = ""
    prefetch_tools: int = 0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(
                f"mode: unknown agent mode {self.mode!r} (use one of {', '.join(MODES)})"
            )
        if self.max_turns < 1:
            raise ConfigError(f"max_turns: must be at least 1, got {self.max_turns}")
        if self.prefetch_tools < 0:
            raise ConfigError(f"prefetch_tools: must be 0 or more, got {self.prefetch_tools}")
        try:
            check_max_repeated_turns(self.max_repeated_turns)
        except ConfigError as exc:
            raise ConfigError(f"max_repeated_turns: {exc}") from None


class Agent:
    """Runs a policy over a toolspace in the ParaAct loop.

    Example:
        >>> agent = Agent(policy, toolspace, AgentConfig(mode="paraact"))  # doctest: +SKIP
        >>> episode = await agent.run("weather in Paris and Rome?")  # doctest: +SKIP
    """

    def __init__(
        self,
        policy: Policy,
        toolspace: Toolspace,
        config: AgentConfig | None = None,
        *,
        trajectory: EpisodeSink | None = None,
    ) -> None:
        self.policy = policy
        self.toolspace = toolspace
        self.config = config or AgentConfig()
        self.trajectory = trajectory
        dispatch = self.config.dispatch
        if self.config.mode == "react":
            dispatch = dataclasses.replace(dispatch, max_calls_per_turn=1)
        self.dispatcher = Dispatcher(dispatch)

    async def run(
        self,
        task: str,
        *,
        task_id: str | None = None,
        on_event: EventCallback | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Episode:
        """Run one episode and return it; ``on_event`` sees every event as it happens.

        Cancelling the call cancels the calls in flight; the episode is still finished with
        status ``cancelled`` (and written) before the cancellation propagates.
        """
        # Progress arrives from other tasks (an MCP client runs each notification's callback in
        # its own task): one event at a time reaches ``on_event``.
        emitting = asyncio.Lock()

        async def emit(event: AgentEvent) -> None:
            if on_event is not None:
                async with emitting:
                    outcome = on_event(event)
                    if inspect.isawaitable(outcome):
                        await outcome

        episode = Episode(
            task_id=task_id,
            task=task,
            mode=self.config.mode,
            model=getattr(self.policy, "name", ""),
            metadata=dict(metadata or {}),
        )
        started = time.perf_counter()
        try:
            await self._loop(episode, emit)
        except asyncio.CancelledError:
            episode.status = "cancelled"
            raise
        except ParaAgentError as exc:
            episode.status, episode.error = "error", str(exc)
            await emit(ErrorEvent(turn=len(episode.turns), message=str(exc), fatal=True))
        finally:
            episode.duration_s = time.perf_counter() - started
            if self.trajectory is not None:
                self.trajectory.write(episode)
        await emit(EpisodeFinished(episode=episode))
        return episode

    async def events(self, task: str, *, task_id: str | None = None) -> AsyncIterator[AgentEvent]:
        """Run one episode as an async stream of events (the last one is ``EpisodeFinished``).

        Closing the stream early cancels the episode.
        """
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        runner = asyncio.create_task(self.run(task, task_id=task_id, on_event=queue.put))
        runner.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await runner
        finally:
            if not runner.done():
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)

    async def _loop(self, episode: Episode, emit: Callable[[AgentEvent], Awaitable[None]]) -> None:
        config = self.config
        session = await self.toolspace.new_session()
        if config.prefetch_tools and not self.toolspace.preloads_every_tool:
            found = await self.toolspace.search(episode.task, top_k=config.prefetch_tools)
            episode.prefetched_tools = [spec.name for spec in found]
            session.load(episode.prefetched_tools)
        preloaded = session.loaded_tools
        messages = [
            Message(
                role="system",
                content=system_prompt(
                    mode=config.mode,
                    preloaded=preloaded,
                    all_loaded=bool(preloaded) and len(preloaded) == len(self.toolspace.tools),
                    max_calls_per_turn=self.dispatcher.config.max_calls_per_turn,
                    extra=config.system_prompt_extra,
                ),
            ),
            Message(role="user", content=episode.task),
        ]
        episode.messages = messages
        executed = False
        repeats = RepeatCounter()
        for index in range(config.max_turns):
            await emit(TurnStarted(turn=index))
            exploring = not (config.mode == "decoupled" and executed)
            completion, model_latency = await self._complete(
                index, messages, session, emit, exploring=exploring
            )
            turn = self._parse(completion, index)
            record = TurnRecord(
                index=index,
                text=completion.text,
                phase=turn.phase if config.mode != "react" else None,
                phase_inferred=turn.phase_inferred,
                calls=turn.calls,
                format_errors=turn.errors,
                answer=turn.answer if turn.is_final else None,
                prompt_token_ids=completion.prompt_token_ids,
                token_ids=completion.token_ids,
                logprobs=completion.logprobs,
                model_latency_s=model_latency,
            )
            episode.turns.append(record)
            assistant_text = render_turn(turn) if completion.tool_calls else completion.text
            messages.append(Message(role="assistant", content=assistant_text))
            await emit(
                PhaseEvent(
                    turn=index,
                    phase=record.phase,
                    inferred=turn.phase_inferred,
                    calls=turn.calls,
                    format_errors=turn.errors,
                )
            )
            if turn.is_final:
                episode.answer, episode.status = turn.answer, "answered"
                await emit(AnswerEvent(turn=index, answer=turn.answer or ""))
                return
            if turn.calls:
                started = time.perf_counter()
                await self._execute(record, turn, session, emit, exploring=exploring)
                record.tools_latency_s = time.perf_counter() - started
                executed = executed or infer_phase(turn.calls) == "execute"
                record.observation = render_observations(record.results)
                repeats.add(turn.calls, record.results)
            else:
                repeats.reset()
                record.observation = render_observations([self._format_feedback(turn, index)])
            messages.append(Message(role="tool", content=record.observation))
            await emit(
                TurnFinished(
                    turn=index,
                    phase=record.phase,
                    n_calls=len(turn.calls),
                    model_latency_s=record.model_latency_s,
                    tools_latency_s=record.tools_latency_s,
                )
            )
            if config.max_repeated_turns and repeats.streak >= config.max_repeated_turns:
                logger.info(
                    "episode %s: turns %d-%d repeated the same calls and results",
                    episode.id,
                    index - repeats.streak + 1,
                    index,
                )
                episode.status = "repeating"
                return
        episode.status = "max_turns"

    async def _complete(
        self,
        index: int,
        messages: list[Message],
        session: ToolSession,
        emit: Callable[[AgentEvent], Awaitable[None]],
        *,
        exploring: bool,
    ) -> tuple[Completion, float]:
        """Ask the policy for turn ``index`` (``exploring`` false: no meta-tool is offered)."""
        offered = [spec for spec in session.tools if exploring or spec.name not in META_TOOLS]
        tools = None
        if self.config.pass_tool_schemas:
            tools = [spec.openai_tool() for spec in offered]

        async def on_text(delta: str) -> None:
            await emit(TextDelta(turn=index, text=delta))

        turn_format = TurnFormat(
            mode=self.config.mode,
            max_calls=self.dispatcher.config.max_calls_per_turn,
            tools=tuple(ToolSchema(name=s.name, parameters=s.input_schema) for s in offered),
            max_tokens=self.config.sampling.max_tokens,
        )
        sampling = self.config.sampling.model_copy(update={"turn_format": turn_format})
        started = time.perf_counter()
        completion = await self.policy.complete(
            list(messages), sampling=sampling, tools=tools, on_text=on_text
        )
        return completion, time.perf_counter() - started

    def _parse(self, completion: Completion, index: int) -> Turn:
        prefix = f"t{index}"
        if completion.tool_calls:
            return turn_from_openai(completion.text, completion.tool_calls, id_prefix=prefix)
        return parse_turn(completion.text, strict=self.config.strict, id_prefix=prefix)

    async def _execute(
        self,
        record: TurnRecord,
        turn: Turn,
        session: ToolSession,
        emit: Callable[[AgentEvent], Awaitable[None]],
        *,
        exploring: bool,
    ) -> None:
        """Run the turn's calls into ``record.results``, in call order.

        ``exploring`` false (decoupled, after an execute turn) refuses every meta-tool call.

        Cancelled mid-turn, the record keeps the results of the calls that finished and a
        ``cancelled`` error for the others, so the written episode shows how far the turn got.
        """
        index = record.index
        refused: dict[str, ToolResult] = {}
        # A decoupled execute turn that also searched would explore and execute at once.
        if not exploring or (
            self.config.mode == "decoupled" and infer_phase(turn.calls) == "execute"
        ):
            for call in turn.calls:
                if infer_phase([call]) == "explore":
                    refused[call.id] = ToolResult.failure(
                        call,
                        ToolErrorKind.PHASE_CLOSED,
                        "decoupled mode: exploration is closed once execution starts",
                    )
        runnable = [call for call in turn.calls if call.id not in refused]

        async def on_start(call: ToolCall) -> None:
            await emit(CallStarted(turn=index, call=call))

        finished: dict[str, ToolResult] = {}

        async def on_finish(result: ToolResult) -> None:
            finished[result.call_id] = result
            await emit(CallFinished(turn=index, result=result))

        async def on_progress(
            call: ToolCall, progress: float, total: float | None, message: str | None
        ) -> None:
            await emit(
                CallProgress(
                    turn=index,
                    call_id=call.id,
                    name=call.name,
                    progress=progress,
                    total=total,
                    message=message,
                )
            )

        for result in refused.values():
            await on_finish(result)
        try:
            results = await self.dispatcher.run_turn(
                runnable, session, on_start=on_start, on_finish=on_finish, on_progress=on_progress
            )
        except asyncio.CancelledError:
            record.results = [
                finished.get(call.id)
                or ToolResult.failure(
                    call, ToolErrorKind.CANCELLED, "the episode was cancelled before the call ended"
                )
                for call in turn.calls
            ]
            raise
        by_id = {result.call_id: result for result in results} | refused
        record.results = [by_id[call.id] for call in turn.calls]

    def _format_feedback(self, turn: Turn, index: int) -> ToolResult:
        problems = "; ".join(error.message for error in turn.errors) or "no tool call and no answer"
        hint = (
            'Write <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks or '
            "<answer>...</answer>."
        )
        return ToolResult(
            call_id=f"t{index}",
            name="format_error",
            error=f"{problems}. {hint}",
            error_kind=ToolErrorKind.FORMAT,
        )

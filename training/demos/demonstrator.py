"""The multi-agent demonstrator, run as a policy inside the runtime's own agent loop.

:class:`DemonstratorPolicy` is a :class:`~paraagent_runtime.policy.base.Policy` whose turns are
decided by the four roles: the planner once, then per turn the explorer (while needed tools are
missing), the executor (while gold calls remain) and finally the verifier (the answer). Every
call really runs through the :class:`~paraagent_runtime.agent.Agent`, the dispatcher and ToolEnv,
so cards and results are real; the agent's message list *is* the linearized single-agent ParaAct
trajectory, in the exact grammar (``render_turn`` / ``render_observations``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp_servers.toolenv import ToolEnv
from paraagent_runtime import (
    DEFAULT_MODE,
    DEMO_MAX_TURNS,
    Agent,
    AgentConfig,
    Completion,
    Episode,
    Message,
    Policy,
    SamplingParams,
    Task,
    ToolCall,
    Toolspace,
    ToolSpec,
)
from paraagent_runtime.actions import Turn, parse_observations, render_turn
from paraagent_runtime.policy import TextCallback

from .roles import (
    AnswerNotes,
    DemoAbort,
    DemoState,
    Executor,
    Explorer,
    FirstSearch,
    NeedWords,
    Planner,
    RoleAction,
    ScriptedExecutor,
    ScriptedExplorer,
    ScriptedPlanner,
    ScriptedVerifier,
    Verifier,
)

__all__ = ["DemonstratorPolicy", "Roles", "demonstrate"]


@dataclass
class Roles:
    """The four roles of one demonstration (scripted privileged roles by default)."""

    planner: Planner
    explorer: Explorer
    executor: Executor
    verifier: Verifier

    @classmethod
    def scripted(
        cls,
        specs: dict[str, ToolSpec],
        *,
        lazy_prob: float,
        recovery_prob: float,
        need_words: NeedWords = "request",
        first_search: FirstSearch = "need",
        answer_notes: AnswerNotes = "labels",
    ) -> Roles:
        """The privileged scripted roles (styles: :mod:`training.demos.roles`'s constants)."""
        return cls(
            planner=ScriptedPlanner(
                specs, lazy_prob=lazy_prob, recovery_prob=recovery_prob, need_words=need_words
            ),
            explorer=ScriptedExplorer(first_search=first_search, need_words=need_words),
            executor=ScriptedExecutor(),
            verifier=ScriptedVerifier(answer_notes=answer_notes),
        )


class DemonstratorPolicy(Policy):
    """Plays one task with the roles; each :meth:`complete` call returns the next turn's text.

    Args:
        task: the ToolEnv task (its gold DAG is the roles' privileged information).
        roles: the four roles.
        specs: tool specs by tool id (the catalog the toolspace serves).
        rng: the episode's random source (style choices, query wording).
        mode: ``paraact``, ``react`` (one call per turn, no phase tags) or ``decoupled``.
        top_k: ``top_k`` of the explorer's searches.
        preloaded: names of the tools the session loads from the start (the explorer skips them).
    """

    name = "demonstrator"

    def __init__(
        self,
        task: Task,
        roles: Roles,
        specs: dict[str, ToolSpec],
        *,
        rng: random.Random,
        mode: str = "paraact",
        top_k: int = 3,
        preloaded: frozenset[str] = frozenset(),
    ) -> None:
        self.task = task
        self.roles = roles
        self.specs = specs
        self.rng = rng
        self.mode = mode
        self.top_k = top_k
        self.preloaded = preloaded
        self.state: DemoState | None = None

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: SamplingParams | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_text: TextCallback | None = None,
    ) -> Completion:
        """Observe the last tool message, let the roles decide, and render the turn."""
        if self.state is None:
            plan = await self.roles.planner.plan(self.task, self.rng)
            self.state = DemoState(
                task=self.task,
                plan=plan,
                specs=self.specs,
                rng=self.rng,
                mode=self.mode,
                top_k=self.top_k,
                loaded=set(self.preloaded),
            )
        state = self.state
        if messages and messages[-1].role == "tool":
            _ingest(state, messages[-1].content)
        action = (
            await self.roles.explorer.explore(state)
            or await self.roles.executor.execute(state)
            or await self.roles.verifier.answer(state)
        )
        state.flags.extend(self.roles.verifier.review(state, action.calls))
        state.pending = list(action.calls)
        state.roles.append(action.role)
        text = render_turn(_turn(action, self.mode))
        return Completion(text=text, finish_reason="stop", model=self.name)


def _turn(action: RoleAction, mode: str) -> Turn:
    calls = [
        ToolCall(id=f"c{i}", name=call.name, arguments=call.arguments)
        for i, call in enumerate(action.calls)
    ]
    phase = None if mode == "react" or action.answer is not None else action.phase
    return Turn(
        think=action.think, phase=phase, calls=calls, answer=action.answer if not calls else None
    )


def _error_of(content: Any) -> str | None:
    if (
        isinstance(content, dict)
        and set(content) == {"error"}
        and isinstance(content["error"], dict)
    ):
        error = content["error"]
        message = str(error.get("message", "")).rsplit(": ", 1)[-1]
        return f"{error.get('type')}: {message[:80]}"
    return None


def _ingest(state: DemoState, observation: str) -> None:
    """Update the state from the tool message answering the pending calls (in call order)."""
    blocks = parse_observations(observation)
    if len(blocks) != len(state.pending):
        raise DemoAbort(f"expected {len(state.pending)} tool responses, got {len(blocks)}")
    for call, block in zip(state.pending, blocks, strict=True):
        error = _error_of(block.content)
        if call.kind == "search" and error is None:
            state.loaded.update(
                card["name"] for card in block.content if isinstance(card, dict) and "name" in card
            )
        elif call.kind == "inspect" and error is None:
            state.loaded.add(block.content.get("name", call.arguments.get("name", "")))
        elif call.kind == "wrong" and call.node is not None:
            state.wrong[call.node] = (call.name, block.content)
        elif call.kind == "gold" and call.node is not None:
            if error is None:
                state.outputs[call.node] = block.content
                state.errors.pop(call.node, None)
            else:
                state.errors[call.node] = error
    state.pending = []


async def demonstrate(
    task: Task,
    env: ToolEnv,
    *,
    roles: Roles,
    rng: random.Random,
    mode: str = DEFAULT_MODE,
    top_k: int = 3,
    max_turns: int = DEMO_MAX_TURNS,
) -> tuple[Episode, DemoState | None]:
    """Run one demonstration episode of ``task`` in its ToolEnv world through the agent loop.

    Returns:
        The episode (its messages are the linearized trajectory) and the roles' final state
        (``None`` when the roles never ran). A role that gives up ends the episode with status
        ``error`` and its reason in ``episode.error``.
    """
    task_env = env.for_task(task)
    toolspace = Toolspace(task_env.sources)
    await toolspace.refresh()
    specs = {spec.id: spec for spec in toolspace.tools.values()}
    preloaded = (
        frozenset(spec.name for spec in specs.values())
        if toolspace.preloads_every_tool
        else frozenset()
    )
    policy = DemonstratorPolicy(
        task, roles, specs, rng=rng, mode=mode, top_k=top_k, preloaded=preloaded
    )
    agent = Agent(policy, toolspace, AgentConfig(mode=mode, max_turns=max_turns, strict=True))  # type: ignore[arg-type]
    try:
        episode = await agent.run(task.query, task_id=task.id)
    finally:
        await toolspace.aclose()
    return episode, policy.state

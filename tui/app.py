"""``paraagent chat``: the Textual app — layout, bindings, actions and the agent worker.

Each task the user types runs as one agent episode in an exclusive worker (group ``run``); the
agent's events reach the widgets as :class:`~tui.widgets.EpisodeView.AgentUpdate` messages, in
order. Esc cancels the worker: the agent cancels the calls in flight and still writes the episode
(status ``cancelled``) to the conversation's history file. Destructive calls wait for the user's
approval (:mod:`tui.approval`); MCP servers' elicitation requests open a dialog.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header

from paraagent_runtime import (
    MODES,
    Agent,
    AgentConfig,
    CallFinished,
    Episode,
    EpisodeFinished,
    ErrorEvent,
    ParaAgentError,
    PhaseEvent,
    Policy,
    ToolCall,
    Toolspace,
    ToolSpec,
    TurnFinished,
    UserError,
)
from paraagent_runtime.mcp import ElicitationRequest, ElicitationResponse, MCPToolSource

from .approval import (
    ApprovalDecision,
    ApprovalGate,
    ApprovalRequest,
    ApprovalRules,
    install_approvals,
)
from .commands import SLASH_COMMANDS, help_markdown, parse_slash, table_cell
from .history import ChatHistory, default_history_dir
from .models import PolicyFactory, default_policy_factory, load_policy
from .widgets import (
    ApprovalScreen,
    Conversation,
    ElicitationScreen,
    EpisodeView,
    Prompt,
    ScrollRequest,
    Sidebar,
    SourceRow,
    Timeline,
)

__all__ = ["ChatApp", "PolicyFactory", "run_chat"]

logger = logging.getLogger(__name__)

_CONTEXT_EXCHANGES = 5
_WIDE = 100
"""Terminals narrower than this many columns hide the sidebar (Ctrl+B shows it)."""
_TOAST_CHARS = 160
"""Errors longer than this go to the conversation in full; their notice shows the start."""
_DARK, _LIGHT = "textual-dark", "textual-light"
ResultT = TypeVar("ResultT")


def _model_name(policy: Policy) -> str:
    for attribute in ("model", "model_name"):
        value = getattr(policy, attribute, None)
        if isinstance(value, str) and value:
            return f"{policy.name}:{value}"
    return policy.name


class ChatApp(App[None]):
    """The chat TUI over one policy and one toolspace (both closed when the app exits).

    Args:
        policy: the model backend.
        toolspace: the tools; its sources get wrapped for approvals, and refreshed on start.
        agent_config: mode, turn budget, dispatch limits (``/mode`` changes the mode).
        history_dir: where conversations are kept (default :func:`default_history_dir`).
        approvals_path: where "always" approvals persist (default ``approvals.json`` next to
            the history directory).
        resume: reopen the latest conversation on start.
        policy_factory: builds a policy for ``/model SPEC`` (default
            :func:`~tui.models.default_policy_factory`, the ``--policy`` specs).
        dark: start with the dark theme (Ctrl+T toggles).
        notice: a line shown as a notification at start.
        show_timings: show measured latencies (turn them off for reproducible screenshots).
    """

    CSS_PATH = "app.tcss"
    TITLE = "paraagent"
    BINDINGS = [
        Binding("escape", "cancel_run", "Cancel"),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar"),
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+l", "clear", "Clear"),
        Binding("ctrl+t", "toggle_theme", "Light/dark"),
        Binding("pageup", "scroll_conversation('page_up')", "Page up", show=False),
        Binding("pagedown", "scroll_conversation('page_down')", "Page down", show=False),
        Binding("ctrl+home", "scroll_conversation('home')", "Oldest output", show=False),
        Binding("ctrl+end", "scroll_conversation('end')", "Newest output", show=False),
    ]

    def __init__(
        self,
        *,
        policy: Policy,
        toolspace: Toolspace,
        agent_config: AgentConfig | None = None,
        history_dir: Path | None = None,
        approvals_path: Path | None = None,
        resume: bool = False,
        policy_factory: PolicyFactory | None = None,
        dark: bool = True,
        show_timings: bool = True,
        notice: str | None = None,
    ) -> None:
        super().__init__()
        self.show_timings = show_timings
        self.notice = notice
        self.policy = policy
        self.toolspace = toolspace
        self.agent_config = agent_config or AgentConfig()
        self.history = ChatHistory(history_dir or default_history_dir())
        self.gate = ApprovalGate(
            ApprovalRules(approvals_path or self.history.directory.parent / "approvals.json"),
            approver=self.ask_approval,
        )
        self.policy_factory = policy_factory or default_policy_factory
        self.resume_on_start = resume
        self.running = False
        self.ready = asyncio.Event()
        self.exchanges: list[tuple[str, str]] = []
        self.theme = _DARK if dark else _LIGHT
        self._wide: bool | None = None

    def compose(self) -> ComposeResult:
        """Sidebar, conversation, timeline and prompt."""
        yield Header()
        with Horizontal(id="body"):
            yield Sidebar(id="sidebar")
            with Vertical(id="main"):
                yield Conversation(id="conversation")
                yield Timeline(id="timeline")
                yield Prompt(placeholder="Ask something, or /help", id="prompt")
        yield Footer()

    @property
    def conversation(self) -> Conversation:
        """The conversation pane."""
        return self.query_one(Conversation)

    @property
    def timeline(self) -> Timeline:
        """The timeline line."""
        return self.query_one(Timeline)

    def on_mount(self) -> None:
        """Show the session, then load the tools in a worker."""
        self.sub_title = _model_name(self.policy)
        self._show_session()
        self._show_sources(loading=True)
        self.query_one(Prompt).focus()
        if self.notice:
            self.notify(self.notice, timeout=15, markup=False)
        self.prepare()

    async def on_unmount(self) -> None:
        """Close the history file, the policy and the toolspace."""
        self.history.close()
        await asyncio.gather(self.policy.aclose(), self.toolspace.aclose(), return_exceptions=True)

    @work(group="setup", exit_on_error=False)
    async def prepare(self) -> None:
        """Load approvals, wrap the sources, list every source's tools; resume when asked."""
        try:
            try:
                self.gate.rules.load()
            except ParaAgentError as exc:
                self.notify(f"{exc} — ignoring saved approvals", severity="warning", markup=False)
            install_approvals(self.toolspace, self.gate)
            for source in self.toolspace.sources.values():
                inner = getattr(source, "inner", source)
                if isinstance(inner, MCPToolSource) and inner.on_elicitation is None:
                    inner.on_elicitation = self.elicit
            await self.toolspace.refresh()
            for name, error in self.toolspace.source_errors.items():
                self.notify(f"tool source {name} failed: {error}", severity="error", markup=False)
        except Exception as exc:  # noqa: BLE001 - a notice, never a traceback
            logger.debug("setup failed", exc_info=True)
            self.notify(f"could not load the tools: {exc}", severity="error", markup=False)
        finally:
            self.ready.set()
            self._show_sources()
        if self.resume_on_start:
            await self._guarded(self._resume(None))

    # --- the agent run -------------------------------------------------------------------------

    def on_input_submitted(self, event: Prompt.Submitted) -> None:
        """Run a task, or a slash command."""
        text = event.value.strip()
        event.input.value = ""
        if not text:
            return
        if text.startswith("/"):
            self.run_command(text)
        elif self.running:
            self.notify("a task is running: wait, or press Esc to cancel it", severity="warning")
        else:
            self.running = True
            self.run_task(text)

    def _config_for_next(self) -> AgentConfig:
        if not self.exchanges:
            return self.agent_config
        lines = ["Earlier in this conversation (context for follow-up requests):"]
        for task, answer in self.exchanges[-_CONTEXT_EXCHANGES:]:
            lines += [f"User: {task}", f"Answer: {answer}"]
        extra = "\n".join(filter(None, [self.agent_config.system_prompt_extra, "\n".join(lines)]))
        return dataclasses.replace(self.agent_config, system_prompt_extra=extra)

    def _destructive_names(self) -> frozenset[str]:
        # Every spelling: the model may call a tool by an alias (its <source>__<tool> form, ...).
        return frozenset(
            spelling
            for name, spec in self.toolspace.tools.items()
            if spec.annotations.destructive
            for spelling in self.toolspace.spellings(name)
        )

    def _specs_of(self, calls: Iterable[ToolCall]) -> list[tuple[ToolSpec, dict[str, Any]]]:
        return [(spec, call.arguments) for call in calls if (spec := self.toolspace.get(call.name))]

    @work(exclusive=True, group="run", exit_on_error=False)
    async def run_task(self, task: str) -> Episode | None:
        """Run one episode for ``task``, rendering its events as they come."""
        self.running = True
        state = "done"
        self.timeline.start()
        try:
            await self.ready.wait()
            view = await self.conversation.add_episode(
                EpisodeView(task, destructive=self._destructive_names())
            )

            async def on_event(event: Any) -> None:
                view.post_message(EpisodeView.AgentUpdate(event))
                if isinstance(event, PhaseEvent) and event.calls:
                    # Asked before dispatch, so deciding does not eat into the call's timeout.
                    await self.gate.decide_ahead(self._specs_of(event.calls))
                elif isinstance(event, TurnFinished):
                    self.gate.forget_pending()

            agent = Agent(
                self.policy,
                self.toolspace,
                self._config_for_next(),
                trajectory=self.history.writer(),
            )
            try:
                episode = await agent.run(task, on_event=on_event)
            except asyncio.CancelledError:
                state = "cancelled"
                view.post_message(EpisodeView.Cancelled())
                raise
            if episode.status == "answered":
                self.exchanges.append((task, episode.answer or ""))
            elif episode.status == "error":
                state = "failed"
            return episode
        except asyncio.CancelledError:
            state = "cancelled"
            self.notify("cancelled the running task", severity="warning")
            raise
        except Exception as exc:  # noqa: BLE001 - a notice, never a traceback
            state = "failed"
            logger.debug("the task failed", exc_info=True)
            self.notify(f"{type(exc).__name__}: {exc}", severity="error", markup=False)
            return None
        finally:
            self.gate.forget_pending()
            self.running = False
            self.timeline.stop(state)
            self._show_sources()
            self._show_session()

    def on_episode_view_agent_update(self, message: EpisodeView.AgentUpdate) -> None:
        """Feed the timeline; show agent errors as notices."""
        self.timeline.apply(message.event)
        if isinstance(message.event, CallFinished | EpisodeFinished):
            self._show_session()
        if isinstance(message.event, ErrorEvent):
            severity = "error" if message.event.fatal else "warning"
            self.notify(message.event.message, severity=severity, markup=False)

    def action_cancel_run(self) -> None:
        """Cancel the running task (its calls in flight are cancelled too)."""
        if not self.workers.cancel_group(self, "run"):
            self.notify("nothing is running")

    # --- dialogs --------------------------------------------------------------------------------

    async def _ask(self, screen: ModalScreen[ResultT], default: ResultT) -> ResultT:
        future: asyncio.Future[ResultT] = asyncio.get_running_loop().create_future()

        def settle(result: ResultT | None) -> None:
            if not future.done():
                future.set_result(default if result is None else result)

        await self.push_screen(screen, callback=settle)
        try:
            return await future
        finally:
            if screen in self.screen_stack:
                screen.dismiss(None)

    async def ask_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask the user whether a destructive call may run."""
        return await self._ask(ApprovalScreen(request), ApprovalDecision(allow=False))

    async def elicit(self, request: ElicitationRequest) -> ElicitationResponse:
        """Answer an MCP server's elicitation request through a dialog."""
        return await self._ask(ElicitationScreen(request), ElicitationResponse(action="cancel"))

    # --- sidebar --------------------------------------------------------------------------------

    def source_rows(self, *, loading: bool = False) -> list[SourceRow]:
        """Each source with its tool count and status."""
        counts: dict[str, int] = {}
        for spec in self.toolspace.tools.values():
            counts[spec.source] = counts.get(spec.source, 0) + 1
        rows = []
        for name, source in self.toolspace.sources.items():
            inner = getattr(source, "inner", source)
            error = self.toolspace.source_errors.get(name)
            if error is not None:
                rows.append(SourceRow(name, 0, "failed", error))
            elif loading:
                rows.append(SourceRow(name, 0, "loading"))
            elif isinstance(inner, MCPToolSource):
                state = inner.connection_state()
                detail = None
                if state.status == "reconnecting":
                    # Reconnection is lazy: once the backoff has passed, the next call retries.
                    retry = (
                        f"next attempt in {state.retry_in_s:.0f}s"
                        if state.retry_in_s >= 1
                        else "retries on next use"
                    )
                    detail = f"{state.error}; {retry}"
                rows.append(SourceRow(name, counts.get(name, 0), state.status, detail))
            else:
                rows.append(SourceRow(name, counts.get(name, 0), "ready"))
        return rows

    def _show_sources(self, *, loading: bool = False) -> None:
        self.query_one(Sidebar).show_sources(self.source_rows(loading=loading))

    def _show_session(self) -> None:
        timeline = self.timeline
        self.query_one(Sidebar).show_session(
            model=_model_name(self.policy),
            mode=self.agent_config.mode,
            tasks=timeline.tasks,
            calls=timeline.session_calls,
        )

    # --- slash commands -------------------------------------------------------------------------

    async def _guarded(self, work_item: Any) -> None:
        try:
            await work_item
        except ParaAgentError as exc:
            await self._report(str(exc))
        except Exception as exc:  # noqa: BLE001 - a notice, never a traceback
            logger.debug("command failed", exc_info=True)
            await self._report(f"{type(exc).__name__}: {exc}")

    async def _report(self, message: str) -> None:
        """An error notice; a long one is written in full to the conversation as well."""
        if len(message) <= _TOAST_CHARS:
            self.notify(message, severity="error", markup=False, timeout=10)
            return
        await self.conversation.add_error(message)
        start = message[:_TOAST_CHARS].rsplit(" ", 1)[0].rstrip(" ;:,")
        self.notify(f"{start}… (details in the conversation)", severity="error", markup=False)

    @work(group="command", exit_on_error=False)
    async def run_command(self, text: str) -> None:
        """Run one slash command; problems become notices."""

        async def dispatch() -> None:
            command = parse_slash(text)
            await getattr(self, f"_command_{command.name}")(command.argument)

        await self._guarded(dispatch())

    async def _command_help(self, argument: str) -> None:
        bindings = [(binding.key, binding.description) for binding in self.BINDINGS] + [
            ("home / end", "oldest / newest output, when the prompt is empty"),
            ("ctrl+p", "command palette"),
        ]
        await self.conversation.add_note(help_markdown(bindings))

    async def _command_tools(self, argument: str) -> None:
        await self.ready.wait()
        if argument:
            found = await self.toolspace.search(argument, top_k=10)
            if not found:
                await self.conversation.add_note(f"no tool matches `{argument}`")
                return
            lines = [f"**Tools matching** `{argument}`", "", "| tool | description |", "|---|---|"]
            for spec in found:
                mark = " ⚠" if spec.annotations.destructive else ""
                description = table_cell(spec.description.replace("\n", " ")[:90])
                lines.append(f"| `{spec.name}`{mark} | {description} |")
            await self.conversation.add_note("\n".join(lines))
            return
        by_source: dict[str, list[str]] = {}
        for spec in self.toolspace.tools.values():
            by_source.setdefault(spec.source, []).append(spec.tool)
        lines = [f"**{len(self.toolspace.tools)} tools**", ""]
        lines += [
            f"- **{source}** ({len(tools)}): {', '.join(tools)}"
            for source, tools in by_source.items()
        ]
        await self.conversation.add_note("\n".join(lines))

    async def _command_servers(self, argument: str) -> None:
        await self.ready.wait()
        self._show_sources()
        lines = ["**Tool sources**", "", "| source | tools | status |", "|---|---|---|"]
        for row in self.source_rows():
            status = row.status + (f": {row.error}" if row.error else "")
            lines.append(f"| {row.name} | {row.tools} | {table_cell(status)} |")
        await self.conversation.add_note("\n".join(lines))

    async def _command_mode(self, argument: str) -> None:
        if not argument:
            await self.conversation.add_note(
                f"mode: **{self.agent_config.mode}** ({', '.join(MODES)})"
            )
            return
        if argument not in MODES:
            raise UserError(f"unknown mode {argument!r}: use {', '.join(MODES)}")
        self.agent_config = dataclasses.replace(self.agent_config, mode=argument)  # type: ignore[arg-type]
        self._show_session()
        self.notify(f"mode: {argument} (from the next task)")

    async def _command_model(self, argument: str) -> None:
        if not argument:
            await self.conversation.add_note(f"model: **{_model_name(self.policy)}**")
            return
        if self.running:
            raise UserError("a task is running: cancel it (Esc) before switching models")
        policy = await load_policy(
            self.policy_factory,
            argument,
            on_load=lambda spec: self.notify(f"loading {spec}…", markup=False),
        )
        previous, self.policy = self.policy, policy
        await previous.aclose()
        self.sub_title = _model_name(policy)
        self._show_session()
        self.notify(f"model: {_model_name(policy)}")

    async def _command_clear(self, argument: str) -> None:
        if self.running:
            raise UserError("a task is running: cancel it (Esc) before clearing")
        await self.conversation.clear()
        self.history.new_conversation()
        self.exchanges.clear()
        self.timeline.forget_session()
        self._show_session()

    async def _command_save(self, argument: str) -> None:
        if not argument:
            if self.history.current is None:
                raise UserError("nothing to save yet: the conversation has no episode")
            await self.conversation.add_note(
                f"this conversation is saved as `{self.history.current}`"
            )
            return
        count = await asyncio.to_thread(self.history.export, Path(argument).expanduser())
        self.notify(f"saved {count} episodes to {argument}", markup=False)

    async def _command_load(self, argument: str) -> None:
        if self.running:
            raise UserError("a task is running: cancel it (Esc) before loading a conversation")
        await self._resume(argument or None)

    async def _command_history(self, argument: str) -> None:
        sessions = self.history.sessions()
        if not sessions:
            await self.conversation.add_note(
                f"no saved conversations in `{self.history.directory}`"
            )
            return
        lines = ["**Saved conversations** (newest first; `/load NAME`)", ""]
        lines += [f"- `{path.stem}`" for path in sessions[:20]]
        await self.conversation.add_note("\n".join(lines))

    async def _resume(self, name: str | None) -> None:
        episodes = await asyncio.to_thread(self.history.resume, name)
        self.timeline.resuming()
        await self.conversation.clear()
        self.exchanges = [(e.task, e.answer or "") for e in episodes if e.status == "answered"]
        destructive = self._destructive_names()
        for episode in episodes:
            view = await self.conversation.add_episode(
                EpisodeView(episode.task, destructive=destructive)
            )
            await view.replay(episode)
        self.timeline.replay(episodes)
        self._show_session()
        self.conversation.follow()
        self.notify(f"resumed {len(episodes)} episodes from {self.history.current}", markup=False)

    # --- actions and the command palette --------------------------------------------------------

    def action_toggle_theme(self) -> None:
        """Switch between the light and the dark theme."""
        self.theme = _LIGHT if self.theme == _DARK else _DARK

    def action_toggle_sidebar(self) -> None:
        """Show or hide the sidebar (until the terminal crosses the narrow/wide boundary)."""
        sidebar = self.query_one(Sidebar)
        sidebar.display = not sidebar.display

    def on_resize(self, event: events.Resize) -> None:
        """Hide the sidebar on narrow terminals, show it on wide ones."""
        wide = event.size.width >= _WIDE
        if wide != self._wide:
            self._wide = wide
            self.query_one(Sidebar).display = wide

    def action_scroll_conversation(self, where: ScrollRequest) -> None:
        """Scroll the conversation (``end`` follows the newest output again)."""
        conversation = self.conversation
        if where == "end":
            conversation.follow()
        elif where == "home":
            conversation.scroll_home(animate=False)
        elif where == "page_up":
            conversation.scroll_page_up(animate=False)
        else:
            conversation.scroll_page_down(animate=False)

    def on_prompt_scroll(self, message: Prompt.Scroll) -> None:
        """The prompt's page and home/end keys scroll the conversation."""
        self.action_scroll_conversation(message.where)

    def action_clear(self) -> None:
        """Clear the conversation (``/clear``)."""
        self.run_command("/clear")

    def action_help(self) -> None:
        """Show the help (``/help``)."""
        self.run_command("/help")

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette: the slash commands that take no free text, plus Textual's own."""
        yield from super().get_system_commands(screen)
        for mode in MODES:
            yield SystemCommand(
                f"Mode: {mode}",
                f"run the next tasks in {mode} mode",
                self._palette(f"/mode {mode}"),
            )
        for name in ("tools", "servers", "clear", "history", "help"):
            yield SystemCommand(f"/{name}", SLASH_COMMANDS[name][1], self._palette(f"/{name}"))
        yield SystemCommand(
            "Resume latest conversation",
            "/load the newest saved conversation",
            self._palette("/load"),
        )
        yield SystemCommand("Cancel running task", "like Esc", self.action_cancel_run)
        yield SystemCommand("Toggle light/dark theme", "like Ctrl+T", self.action_toggle_theme)

    def _palette(self, text: str) -> Callable[[], None]:
        return lambda: self.run_command(text)


def run_chat(
    *,
    policy: Policy,
    toolspace: Toolspace,
    agent_config: AgentConfig | None = None,
    history_dir: Path | None = None,
    approvals_path: Path | None = None,
    resume: bool = False,
    policy_factory: PolicyFactory | None = None,
    dark: bool = True,
    notice: str | None = None,
) -> None:
    """Open the chat TUI (blocks until the user quits); the policy and toolspace are closed at exit.

    Args:
        policy: the model backend.
        toolspace: the tools (refreshed on start; need not be refreshed before).
        agent_config: mode, turn budget and dispatch limits.
        history_dir: where conversations are kept (default ``~/.local/share/paraagent/history``).
        approvals_path: where "always" approvals persist.
        resume: reopen the latest conversation.
        policy_factory: builds the policy for ``/model NAME``.
        dark: start with the dark theme.
        notice: a line shown as a notification at start (e.g. that the default is a demo model).
    """
    ChatApp(
        policy=policy,
        toolspace=toolspace,
        agent_config=agent_config,
        history_dir=history_dir,
        approvals_path=approvals_path,
        resume=resume,
        policy_factory=policy_factory,
        dark=dark,
        notice=notice,
    ).run()

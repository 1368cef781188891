"""paraagent: parallel tool use for agents (ParaAct) over MCP and built-in tool sources.

The public API. Build a :class:`Toolspace` from tool sources (:class:`FunctionToolSource`, MCP
servers from :mod:`paraagent_runtime.mcp`, ToolEnv), pick a :class:`Policy` with
:func:`policy_from_spec` and run an :class:`Agent`; it yields typed events and returns an
:class:`Episode`. Tasks with verifiable answers (:class:`Task`, :func:`check_answer`) are the
contract shared with ToolEnv and training.

Documented subpackages: :mod:`paraagent_runtime.policy` (backends), :mod:`paraagent_runtime.mcp`
(MCP client sources and server) and :mod:`paraagent_runtime.retrieval` (the tool index, the
``retrieval`` extra). Every name here loads on first use, so ``import paraagent_runtime`` costs
nothing and pulls in no optional dependency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .agent import Agent, AgentConfig
    from .checker import CheckResult, check_answer
    from .dispatch import DispatchConfig
    from .errors import (
        ConfigError,
        MCPConnectionError,
        MissingExtraError,
        ModelAPIError,
        ParaAgentError,
        RunError,
        ToolExecutionError,
        UnknownToolError,
        UserError,
    )
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
    from .meta import INSPECT_TOOL, META_TOOLS, SEARCH_TOOLS
    from .modes import (
        DEFAULT_MAX_REPEATED_TURNS,
        DEFAULT_MAX_TURNS,
        DEFAULT_MODE,
        DEFAULT_TURN_TOKENS,
        DEMO_MAX_TURNS,
        MODES,
        AgentMode,
    )
    from .naming import model_facing_name, tool_id
    from .policy import Completion, Message, Policy, SamplingParams, policy_from_spec
    from .repetition import RepeatCounter
    from .search import ToolSearch
    from .sources import FunctionTool, FunctionToolSource, ToolSource
    from .tasks import (
        SPLITS,
        TEST_SPLITS,
        AnswerFact,
        EpisodeMetrics,
        GoldCall,
        PinnedResponse,
        Task,
        load_tasks,
        refuse_test_split,
        resolve_binding,
        resolve_path,
        save_tasks,
    )
    from .tools import ToolAnnotations, ToolCall, ToolErrorKind, ToolResult, ToolSpec
    from .toolspace import Toolspace
    from .trajectory import Episode, TrajectoryWriter, TurnRecord, read_episodes, read_jsonl_lines

__all__ = [
    "DEFAULT_MAX_REPEATED_TURNS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_MODE",
    "DEFAULT_TURN_TOKENS",
    "DEMO_MAX_TURNS",
    "INSPECT_TOOL",
    "META_TOOLS",
    "MODES",
    "SEARCH_TOOLS",
    "SPLITS",
    "TEST_SPLITS",
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "AgentMode",
    "AnswerEvent",
    "AnswerFact",
    "CallFinished",
    "CallProgress",
    "CallStarted",
    "CheckResult",
    "Completion",
    "ConfigError",
    "DispatchConfig",
    "Episode",
    "EpisodeFinished",
    "EpisodeMetrics",
    "ErrorEvent",
    "FunctionTool",
    "FunctionToolSource",
    "GoldCall",
    "MCPConnectionError",
    "Message",
    "MissingExtraError",
    "ModelAPIError",
    "ParaAgentError",
    "PhaseEvent",
    "PinnedResponse",
    "Policy",
    "RepeatCounter",
    "RunError",
    "SamplingParams",
    "Task",
    "TextDelta",
    "ToolAnnotations",
    "ToolCall",
    "ToolErrorKind",
    "ToolExecutionError",
    "ToolResult",
    "ToolSearch",
    "ToolSource",
    "ToolSpec",
    "Toolspace",
    "TrajectoryWriter",
    "TurnFinished",
    "TurnRecord",
    "TurnStarted",
    "UnknownToolError",
    "UserError",
    "check_answer",
    "load_tasks",
    "model_facing_name",
    "policy_from_spec",
    "read_episodes",
    "read_jsonl_lines",
    "refuse_test_split",
    "resolve_binding",
    "resolve_path",
    "save_tasks",
    "tool_id",
]

_WHERE: dict[str, str] = {
    "Agent": "agent",
    "AgentConfig": "agent",
    "CheckResult": "checker",
    "check_answer": "checker",
    "DispatchConfig": "dispatch",
    "ConfigError": "errors",
    "MCPConnectionError": "errors",
    "MissingExtraError": "errors",
    "ModelAPIError": "errors",
    "ParaAgentError": "errors",
    "RunError": "errors",
    "ToolExecutionError": "errors",
    "UnknownToolError": "errors",
    "UserError": "errors",
    "AgentEvent": "events",
    "AnswerEvent": "events",
    "CallFinished": "events",
    "CallProgress": "events",
    "CallStarted": "events",
    "EpisodeFinished": "events",
    "ErrorEvent": "events",
    "PhaseEvent": "events",
    "TextDelta": "events",
    "TurnFinished": "events",
    "TurnStarted": "events",
    "INSPECT_TOOL": "meta",
    "META_TOOLS": "meta",
    "SEARCH_TOOLS": "meta",
    "DEFAULT_MAX_REPEATED_TURNS": "modes",
    "DEFAULT_MAX_TURNS": "modes",
    "DEFAULT_TURN_TOKENS": "modes",
    "DEFAULT_MODE": "modes",
    "DEMO_MAX_TURNS": "modes",
    "MODES": "modes",
    "AgentMode": "modes",
    "model_facing_name": "naming",
    "tool_id": "naming",
    "Completion": "policy",
    "Message": "policy",
    "Policy": "policy",
    "SamplingParams": "policy",
    "policy_from_spec": "policy",
    "RepeatCounter": "repetition",
    "ToolSearch": "search",
    "FunctionTool": "sources",
    "FunctionToolSource": "sources",
    "ToolSource": "sources",
    "SPLITS": "tasks",
    "TEST_SPLITS": "tasks",
    "refuse_test_split": "tasks",
    "AnswerFact": "tasks",
    "EpisodeMetrics": "tasks",
    "GoldCall": "tasks",
    "PinnedResponse": "tasks",
    "Task": "tasks",
    "load_tasks": "tasks",
    "resolve_binding": "tasks",
    "resolve_path": "tasks",
    "save_tasks": "tasks",
    "ToolAnnotations": "tools",
    "ToolCall": "tools",
    "ToolErrorKind": "tools",
    "ToolResult": "tools",
    "ToolSpec": "tools",
    "Toolspace": "toolspace",
    "Episode": "trajectory",
    "TrajectoryWriter": "trajectory",
    "TurnRecord": "trajectory",
    "read_episodes": "trajectory",
    "read_jsonl_lines": "trajectory",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)

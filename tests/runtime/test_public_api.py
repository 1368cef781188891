"""The public API: ``paraagent_runtime.__all__`` is pinned, documented and cheap to import."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import paraagent_runtime

PUBLIC = [
    "DEFAULT_MAX_REPEATED_TURNS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_TURN_TOKENS",
    "DEFAULT_MODE",
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

HEAVY = ("torch", "numpy", "faiss", "transformers", "textual", "sentence_transformers", "vllm")
SUBPACKAGES = ("paraagent_runtime.policy", "paraagent_runtime.mcp", "paraagent_runtime.retrieval")


def test_all_is_pinned() -> None:
    assert sorted(paraagent_runtime.__all__) == sorted(PUBLIC)
    assert len(set(paraagent_runtime.__all__)) == len(paraagent_runtime.__all__)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_name_resolves_to_its_defining_module(name: str) -> None:
    value = getattr(paraagent_runtime, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        assert value.__module__.startswith("paraagent_runtime.")
        assert getattr(importlib.import_module(value.__module__), name) is value


def _attribute_docstring(module_name: str, name: str) -> str | None:
    """The string literal right after ``name = …`` at the top level of ``module_name``."""
    tree = ast.parse(Path(importlib.import_module(module_name).__file__ or "").read_text())
    body = tree.body
    for node, following in zip(body, body[1:], strict=False):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
                return str(following.value.value)
            return None
    return None


@pytest.mark.parametrize("name", PUBLIC)
def test_every_name_is_documented(name: str) -> None:
    value = getattr(paraagent_runtime, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        doc = value.__doc__
    else:  # a constant or a type alias: its attribute docstring in the defining module
        module = paraagent_runtime._WHERE[name]
        doc = _attribute_docstring(f"paraagent_runtime.{module}", name)
    assert doc and doc.strip(), f"{name} has no docstring"


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_documented_subpackages_export_what_they_list(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__doc__
    if package == "paraagent_runtime.retrieval":  # lazy: its names need the retrieval extra
        assert set(module.__all__) == set(module._WHERE)
    else:
        for name in module.__all__:
            assert getattr(module, name) is not None


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split(".")[0] for line in out.splitlines()}


def test_import_is_light() -> None:
    loaded = _modules_after("import paraagent_runtime")
    assert not loaded & {*HEAVY, "pydantic", "httpx", "mcp", "jsonschema"}


def test_every_public_name_loads_without_heavy_dependencies() -> None:
    code = "import paraagent_runtime as p\nfor n in p.__all__: getattr(p, n)"
    assert not _modules_after(code) & {*HEAVY, "mcp"}

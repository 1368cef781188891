"""Sub-commands load lazily: ``--help`` imports nothing heavy; a missing extra is one line."""

from __future__ import annotations

import pytest

from .helpers import run_python

HEAVY = (
    "torch",
    "transformers",
    "textual",
    "numpy",
    "faiss",
    "sentence_transformers",
    "mcp",
    "aiohttp",
    "pydantic",
    "mcp_servers",
    "training",
    "tui.app",
    "paraagent_runtime.agent",
    "paraagent_runtime.tools",
    "paraagent_runtime.toolspace",
    "paraagent_runtime.trajectory",
    "paraagent_runtime.policy",
    "paraagent_runtime.retrieval",
    "paraagent_runtime.mcp",
)

LOADED = """
import contextlib, io, sys
from paraagent_runtime.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main({argv!r})
heavy = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in {heavy!r}))
print(code, heavy)
"""


@pytest.mark.parametrize(
    "argv", [["--help"], ["run", "--help"], ["serve", "--help"], ["chat", "--help"]], ids=" ".join
)
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    result = run_python(LOADED.format(argv=argv, heavy=HEAVY))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 []"


# A sub-app's help may load its own command module, never a model, a UI or the simulator.
SUB_APP_HEAVY = (
    "torch",
    "transformers",
    "textual",
    "faiss",
    "sentence_transformers",
    "mcp",
    "trl",
    "peft",
    "datasets",
    "matplotlib",
    "mcp_servers.toolenv.simulator",
    "mcp_servers.toolenv.world",
    "mcp_servers.toolenv.catalog.build",
)


@pytest.mark.parametrize(
    "argv",
    [["toolenv", "--help"], ["train", "--help"], ["eval", "--help"], ["index", "--help"]],
    ids=" ".join,
)
def test_sub_app_help_loads_no_model_ui_or_simulator(argv: list[str]) -> None:
    result = run_python(LOADED.format(argv=argv, heavy=SUB_APP_HEAVY))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 []"


@pytest.mark.parametrize(
    "argv", [["index", "--help"], ["index", "build", "--help"], ["index", "search", "--help"]]
)
def test_index_help_reads_its_settings_without_numpy(argv: list[str]) -> None:
    # The index's settings (retrieval.config) are read; the code that embeds and fuses is not.
    heavy = ("numpy", "paraagent_runtime.tools", "paraagent_runtime.retrieval.fusion")
    result = run_python(LOADED.format(argv=argv, heavy=heavy))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 []"


@pytest.mark.parametrize(
    ("blocked", "argv", "extra"),
    [
        (frozenset({"textual"}), ["chat"], "tui"),
        (frozenset({"trl", "peft", "datasets", "yaml"}), ["train", "sft"], "train"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(blocked, argv: list[str], extra: str) -> None:
    code = f"import sys; from paraagent_runtime.cli import main; sys.exit(main({argv!r}))"
    result = run_python(code, blocked=blocked)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: paraagent {argv[0]} needs the {extra!r} extra: pip install 'paraagent[{extra}]'"
    ]


def test_help_needs_no_extra() -> None:
    code = "import sys; from paraagent_runtime.cli import main; sys.exit(main(['chat', '--help']))"
    result = run_python(code, blocked=frozenset({"textual", "torch", "faiss"}))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: paraagent chat [OPTIONS]")


def test_the_extra_named_is_the_commands_then_the_modules() -> None:
    from paraagent_runtime.cli.lazy import extra_for

    numpy = ModuleNotFoundError("No module named 'numpy'", name="numpy")
    assert extra_for(numpy) == "local"
    assert extra_for(numpy, "retrieval") == "retrieval"
    assert extra_for(ModuleNotFoundError(name="textual.app")) == "tui"
    assert extra_for(ModuleNotFoundError(name="onnxruntime_genai")) == "local"
    assert extra_for(ModuleNotFoundError(name="peft.tuners")) == "local"
    assert extra_for(ModuleNotFoundError(name="paraagent_runtime.gone"), "train") is None
    assert extra_for(ImportError("cannot import name 'x'")) is None

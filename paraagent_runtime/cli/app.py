"""The typer application: global options and the commands that run agents."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

__all__ = ["app"]

app = typer.Typer(
    name="paraagent",
    help=(
        "Parallel-acting LLM agents in open-world tool spaces (ParaAct runtime, ToolEnv, training)."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()


@app.callback()
def _global(
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="More logging (-v info, -vv debug).")
    ] = 0,
) -> None:
    """Configure logging for every command."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Some libraries (bm25s) set their own loggers to DEBUG; the handler level keeps them quiet.
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)


PolicyOption = Annotated[
    str,
    typer.Option(
        "--policy",
        "-p",
        help=(
            'Policy spec: "paraagent" (ParaAgent-135M, offline), "local" (base SmolLM2-135M), '
            '"local:PATH", "openai:MODEL" (with --base-url), "vllm:MODEL".'
        ),
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (vllm serve)."
    ),
]
ModeOption = Annotated[
    str, typer.Option("--mode", "-m", help="Agent mode: paraact, react or decoupled.")
]


@app.command()
def run(
    task: Annotated[str | None, typer.Argument(help="A task in natural language.")] = None,
    tasks: Annotated[
        Path | None,
        typer.Option("--tasks", help='JSONL file of tasks (ToolEnv tasks or {"query": ...}).'),
    ] = None,
    builtin_tasks: Annotated[
        int, typer.Option("--builtin-tasks", help="Run the first N built-in ToolEnv tasks.")
    ] = 0,
    policy: PolicyOption = "paraagent",
    base_url: BaseUrlOption = None,
    mode: ModeOption = "paraact",
    max_turns: Annotated[int, typer.Option(help="Turns before an episode gives up.")] = 8,
    max_tokens: Annotated[int, typer.Option(help="Tokens per model turn.")] = 384,
    temperature: Annotated[float, typer.Option(help="Sampling temperature (0 = greedy).")] = 0.0,
    seed: Annotated[int, typer.Option(help="ToolEnv world seed for free-form tasks.")] = 0,
    mcp_config: Annotated[
        Path | None,
        typer.Option("--mcp-config", help="mcpServers JSON: add these MCP servers' tools."),
    ] = None,
    trajectory: Annotated[
        Path | None,
        typer.Option("--trajectory", "-o", help="JSONL file the episodes are appended to."),
    ] = None,
) -> None:
    """Run the ParaAct agent on tasks and print each phase trace, the answers and a summary."""
    from .run_command import RunOptions, run_tasks

    options = RunOptions(
        task=task,
        tasks_file=tasks,
        builtin_tasks=builtin_tasks,
        policy=policy,
        base_url=base_url,
        mode=mode,  # type: ignore[arg-type]
        max_turns=max_turns,
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
        mcp_config=mcp_config,
        trajectory=trajectory
        or Path("runs") / f"trajectories-{time.strftime('%Y%m%d-%H%M%S')}.jsonl",
    )
    asyncio.run(run_tasks(options, console))


def _mount_subcommands() -> None:
    """Attach the commands each area provides (their heavy imports stay inside the commands)."""
    from mcp_servers.toolenv.catalog.cli import toolenv_app
    from training.cli import train_app
    from training.rl.cli import rl_app
    from tui.cli import chat_command

    from ..mcp.cli import serve_app
    from ..policy.server import serve_model_command
    from ..retrieval.evaluate import app as eval_app
    from .eval_retrieval import eval_retrieval_command
    from .eval_toolenv import eval_toolenv_command
    from .index_command import index_app

    app.command(
        "serve-model", help="Serve a local model over an OpenAI-compatible chat-completions API."
    )(serve_model_command)
    app.command(
        "chat",
        help="Open the Textual chat UI (ToolEnv + the default policy unless told otherwise).",
    )(chat_command)
    app.add_typer(serve_app)
    eval_app.command(
        "retrieval", help="Recall/NDCG/Completeness@k of BM25, dense and hybrid tool retrieval."
    )(eval_retrieval_command)
    eval_app.command(
        "toolenv", help="Success, turns, calls and critical path of the agent on ToolEnv tasks."
    )(eval_toolenv_command)
    app.add_typer(eval_app, name="eval", help="Evaluate retrieval and agents.")
    app.add_typer(toolenv_app, name="toolenv")
    app.add_typer(index_app, name="index")
    train_app.add_typer(rl_app, name="rl")
    app.add_typer(train_app, name="train")


_mount_subcommands()

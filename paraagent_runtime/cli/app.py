"""The typer application: global options and the commands that run agents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import options
from .lazy import LazyCommand, lazy_group

__all__ = ["app", "eval_app"]

eval_app = typer.Typer(
    name="eval",
    help="Evaluate retrieval and agents.",
    cls=lazy_group(
        {
            "retrieval": LazyCommand(
                "paraagent_runtime.cli.eval_retrieval:eval_retrieval_command",
                "Recall/NDCG/Completeness@k of BM25, dense and hybrid tool retrieval.",
                extra="retrieval",
            ),
            "toolenv": LazyCommand(
                "paraagent_runtime.cli.eval_toolenv:eval_toolenv_command",
                "Success, turns, calls and critical path of the agent on ToolEnv tasks.",
            ),
        }
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

# Plain (click) help: typer's rich help costs ~0.1 s of imports on every --help.
app = typer.Typer(
    name="paraagent",
    help=(
        "Parallel-acting LLM agents in open-world tool spaces (ParaAct runtime, ToolEnv, training)."
    ),
    cls=lazy_group(
        {
            "chat": LazyCommand(
                "paraagent_runtime.cli.chat_command:chat_command",
                "Open the Textual chat UI (ToolEnv + the default policy unless told otherwise).",
            ),
            "serve": LazyCommand(
                "paraagent_runtime.cli.serve_command:serve_command",
                "Serve paraagent (run_task and the search_tools/call_tool gateway) over MCP.",
            ),
            "serve-model": LazyCommand(
                "paraagent_runtime.cli.serve_model_command:serve_model_command",
                "Serve a local model over an OpenAI-compatible chat-completions API.",
            ),
            "eval": LazyCommand(
                "paraagent_runtime.cli.app:eval_app", "Evaluate retrieval and agents."
            ),
            "toolenv": LazyCommand(
                "mcp_servers.toolenv.catalog.cli:toolenv_app",
                "ToolEnv: the simulated tool catalog.",
            ),
            "index": LazyCommand(
                "paraagent_runtime.cli.index_command:index_app",
                "Build and query the hybrid (FAISS + BM25) tool index.",
                extra="retrieval",
            ),
            "train": LazyCommand(
                "training.cli:train_app",
                "Cold-start demonstrations, SFT, RL and their evaluation.",
                extra="train",
            ),
        }
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"paraagent {version('paraagent')}")
        raise typer.Exit()


@app.callback()
def _global(
    # Plain flags: typer coerces any other type through pydantic, 0.1 s of imports per start.
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Progress logs (info) and third-party loading bars."),
    ] = False,
    # "-vv" is an option of its own (click matches it whole before splitting short flags), so
    # both stay bool flags, which typer passes through without importing pydantic.
    debug: Annotated[
        bool, typer.Option("--debug", "-vv", help="Everything (debug logs) as well.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Configure logging for every command (see :func:`.output.configure_output`)."""
    from .output import configure_output

    configure_output(2 if debug else int(verbose))


@app.command(short_help="Run the agent on tasks: the phase trace, the answers, a summary.")
def run(
    task: Annotated[str | None, typer.Argument(help="A task in natural language.")] = None,
    tasks: Annotated[
        Path | None,
        typer.Option("--tasks", help='JSONL file of tasks (ToolEnv tasks or {"query": ...}).'),
    ] = None,
    builtin_tasks: Annotated[
        int,
        typer.Option("--builtin-tasks", min=0, help="Run the first N built-in ToolEnv tasks."),
    ] = 0,
    policy: Annotated[str, options.policy()] = "paraagent",
    base_url: Annotated[str | None, options.base_url()] = None,
    mode: Annotated[options.ModeChoice, options.mode()] = options.DEFAULT_MODE,
    max_turns: Annotated[int, options.max_turns()] = options.DEFAULT_MAX_TURNS,
    max_repeated_turns: Annotated[
        int, options.max_repeated_turns()
    ] = options.DEFAULT_MAX_REPEATED_TURNS,
    max_tokens: Annotated[int, options.max_tokens()] = options.DEFAULT_TURN_TOKENS,
    temperature: Annotated[float, options.temperature()] = 0.0,
    prefetch_tools: Annotated[int, options.prefetch_tools()] = 0,
    seed: Annotated[int, options.seed("ToolEnv world seed for free-form tasks.")] = 0,
    mcp_config: Annotated[Path | None, options.mcp_config()] = None,
    toolenv: Annotated[bool | None, options.toolenv()] = None,
    out: Annotated[
        Path | None,
        options.out("JSONL file the episodes are appended to (default runs/trajectories-*.jsonl)."),
    ] = None,
    max_calls_per_turn: Annotated[int | None, options.max_calls_per_turn()] = None,
    max_concurrency: Annotated[int | None, options.max_concurrency()] = None,
    per_source_concurrency: Annotated[int | None, options.per_source_concurrency()] = None,
    call_timeout: Annotated[float | None, options.call_timeout()] = None,
) -> None:
    """Run the ParaAct agent on tasks and print each phase trace, the answers and a summary.

    Exits 1 when an episode ended in an error, 130 on Ctrl-C (the running episode is kept).
    """
    import asyncio

    from rich.console import Console

    from .run_command import RunOptions, errored, first_error, run_tasks

    run_options = RunOptions(
        task=task,
        tasks_file=tasks,
        builtin_tasks=builtin_tasks,
        policy=policy,
        base_url=base_url,
        mode=mode.value,  # type: ignore[arg-type]
        max_turns=max_turns,
        max_repeated_turns=max_repeated_turns,
        max_tokens=max_tokens,
        temperature=temperature,
        prefetch_tools=prefetch_tools,
        seed=seed,
        mcp_config=mcp_config,
        toolenv=toolenv,
        trajectory=out,
        dispatch=options.dispatch_limits(
            max_calls_per_turn, max_concurrency, per_source_concurrency, call_timeout
        ),
    )
    try:
        episodes = asyncio.run(run_tasks(run_options, Console()))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None  # run_tasks said what was kept
    if failed := errored(episodes):
        typer.echo(
            f"error: {failed} of {len(episodes)} episodes ended in an error; the first: "
            f"{' '.join((first_error(episodes) or '').split())} (see {run_options.trajectory})",
            err=True,
        )
        raise typer.Exit(1)

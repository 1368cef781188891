"""``paraagent eval toolenv``: run the agent on ToolEnv tasks per mode and report the numbers.

The CLI is the composition root, so this module wires ToolEnv (``mcp_servers.toolenv``) to the
runtime's policies; the evaluation itself lives in :mod:`mcp_servers.toolenv.evaluation`.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from ..errors import ParaAgentError
from ..intervals import DEFAULT_EVAL_TASKS
from . import options
from .run_paths import fresh_run_path

if TYPE_CHECKING:
    from ..dispatch import DispatchConfig
    from ..policy.base import Policy

__all__ = [
    "ORACLE",
    "compare_evaluations",
    "eval_toolenv_command",
    "run_eval",
]

ORACLE = "oracle"


async def run_eval(
    *,
    policy: str,
    base_url: str | None,
    modes: list[str],
    split: str,
    n: int,
    seed: int,
    out: Path | None,
    max_turns: int,
    max_tokens: int,
    llm_turn_s: float | None,
    console: Console,
    max_repeated_turns: int = options.DEFAULT_MAX_REPEATED_TURNS,
    catalog: str = "builtin",
    distractors: int = 48,
    concurrency: int = 1,
    dispatch: DispatchConfig | None = None,
    summary: Path | None = None,
    command: str = "paraagent eval toolenv",
    families: list[str] | None = None,
    prefetch_tools: int = 0,
) -> Path:
    """Run the evaluation, print the table and write the report files; return the markdown path.

    ``families`` narrows the tasks to those families; ``prefetch_tools`` loads that many tools
    matching each task's text before its first turn. ``split`` ``all`` runs every split in
    turn, each into its own folder under ``out`` (``None``: a fresh ``runs/eval-toolenv-…``,
    claimed once the options are valid and the policy is loaded); with ``summary`` every
    split's table and example queries also go to ``summary``.md/.json
    (:mod:`mcp_servers.toolenv.split_report`), ``command`` named there as how they were made.

    Raises:
        ConfigError: a bad option (unknown mode or split, bad policy spec, ``n`` < 1).
    """
    from mcp_servers.toolenv.catalog_tasks import catalog_task_records
    from mcp_servers.toolenv.evaluation import (
        EpisodeMetrics,
        EvalConfig,
        catalog_eval_setup,
        evaluate_toolenv,
        markdown_table,
        write_report,
    )
    from mcp_servers.toolenv.oracle import oracle_policy
    from mcp_servers.toolenv.split_report import EXAMPLES_PER_SPLIT, SplitRun, write_splits

    from ..dispatch import DispatchConfig
    from ..policy import policy_from_spec
    from ..policy.base import SamplingParams
    from ..tasks import SPLITS

    splits = list(SPLITS) if split == "all" else [split]

    def config_for(name: str) -> EvalConfig:
        return EvalConfig(
            policy=policy,
            modes=modes,  # type: ignore[arg-type]
            split=name,
            n=n,
            seed=seed,
            max_turns=max_turns,
            max_repeated_turns=max_repeated_turns,
            sampling=SamplingParams(max_tokens=max_tokens, temperature=0.0, seed=seed),
            llm_turn_s=llm_turn_s,
            catalog=catalog,
            distractors=distractors,
            concurrency=concurrency,
            dispatch=dispatch or DispatchConfig(),
            families=families,
            prefetch_tools=prefetch_tools,
        )

    configs = [config_for(name) for name in splits]  # bad options fail here, before any write
    records = None
    if catalog == "full":
        from mcp_servers.toolenv.catalog import load_catalog

        records = load_catalog(progress=True).records
    model: Policy | None = None
    if policy != ORACLE:
        model = policy_from_spec(policy, base_url=base_url)

    def factory(task, mode):  # noqa: ANN001, ANN202 - matches PolicyFactory
        if model is not None:
            return model
        if records is None:
            return oracle_policy(task, mode)
        return oracle_policy(task, mode, records=catalog_task_records(task, records))

    def progress(metrics: EpisodeMetrics) -> None:
        mark = "[green]✓[/]" if metrics.success else "[red]✗[/]"
        console.print(
            f"  {mark} {metrics.mode:<9} {metrics.task_id:<48} turns {metrics.turns:>2}  "
            f"exec {metrics.execute_turns}/{metrics.gold_depth}  calls {metrics.tool_calls}",
            highlight=False,
        )

    directory = out or fresh_run_path("eval-toolenv", directory=True)
    runs: list[SplitRun] = []
    try:
        for valid in configs:
            split_out = directory / valid.split if len(configs) > 1 else directory
            config = replace(valid, out=split_out)
            if records is not None:
                tasks, env_factory = catalog_eval_setup(config, records)
            else:
                tasks = config.tasks()
                env_factory = None
            report = await evaluate_toolenv(
                config, factory, tasks=tasks, on_episode=progress, env_factory=env_factory
            )
            paths = write_report(report, split_out)
            console.print()
            console.print(markdown_table(report), highlight=False, markup=False)
            console.print(
                f"report: {paths['markdown']}, {paths['json']}, {paths['plot']}; "
                f"trajectories in {split_out}"
            )
            runs.append(SplitRun(report, tuple(t.query for t in tasks[:EXAMPLES_PER_SPLIT])))
    finally:
        if model is not None:
            await model.aclose()
    if summary is not None:
        for path in write_splits(runs, summary, command=command):
            console.print(f"summary: {path}")
    return paths["markdown"]


def _command_line(**flags: object) -> str:
    """The ``paraagent eval toolenv`` call with these flags (the ones a summary depends on).

    Flags left at ``None`` are left out; budgets (turns, tokens) are always written, since a
    rerun with another default would not reproduce the summary.
    """
    parts = ["paraagent eval toolenv"]
    parts += [
        f"--{name.replace('_', '-')} {value}" for name, value in flags.items() if value is not None
    ]
    return " ".join(parts)


def compare_evaluations(first: Path, second: Path, console: Console) -> str:
    """Print ``first`` minus ``second`` paired by task (intervals), and return the table.

    Raises:
        ConfigError: a file is not an evaluation with per-task outcomes, or nothing pairs.
    """
    from mcp_servers.toolenv.evaluation import compare_files, comparison_table

    table = comparison_table(compare_files(first, second))
    # soft_wrap: a table row wrapped at the terminal's width is no markdown once redirected.
    console.print(
        f"Paired by task: {first} minus {second} (bootstrap 95% intervals)\n",
        highlight=False,
        soft_wrap=True,
    )
    console.print(table, highlight=False, markup=False, soft_wrap=True)
    return table


def _fail(exc: ParaAgentError) -> NoReturn:
    """One ``error:`` line on stderr, exit 2 (results stay alone on stdout)."""
    typer.echo(f"error: {' '.join(str(exc).split())}", err=True)
    raise typer.Exit(2) from exc


def eval_toolenv_command(
    policy: Annotated[
        str,
        options.policy(
            '"oracle" (scripted upper bound from the gold DAG) or a policy spec (local, '
            "openai:MODEL, …)."
        ),
    ] = ORACLE,
    base_url: Annotated[str | None, options.base_url()] = None,
    mode: Annotated[
        list[str] | None,
        options.modes(
            f"{', '.join(options.MODE_NAMES)} (repeat or comma-separate) or all [default: all]."
        ),
    ] = None,
    split: Annotated[
        str,
        typer.Option(
            help="train, dev, test-seen, test-unseen-tools, test-unseen-categories (choose on "
            "dev; test splits are for reporting) or all (each in turn, in its own folder)."
        ),
    ] = "test-seen",
    n_tasks: Annotated[int, options.n_tasks()] = DEFAULT_EVAL_TASKS,
    catalog: Annotated[
        str,
        typer.Option(
            help="builtin (hand-written task families) or full (description-driven G1/G2/G3 "
            "tasks over the real catalog)."
        ),
    ] = "builtin",
    distractors: Annotated[
        int, typer.Option(min=0, help="Non-gold tools per task's toolspace with --catalog full.")
    ] = 48,
    family: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="Draw the tasks from these builtin families only (repeat or comma-separate; "
            "default: the split's own), e.g. the hidden-need ones.",
        ),
    ] = None,
    prefetch_tools: Annotated[int, options.prefetch_tools()] = 0,
    seed: Annotated[int, options.seed("Task generator seed.")] = 0,
    out: Annotated[
        Path | None,
        options.out("Output directory (report.md/json/png, trajectories; default runs/…)."),
    ] = None,
    max_turns: Annotated[int, options.max_turns()] = options.DEFAULT_MAX_TURNS,
    max_repeated_turns: Annotated[
        int, options.max_repeated_turns()
    ] = options.DEFAULT_MAX_REPEATED_TURNS,
    max_tokens: Annotated[int, options.max_tokens()] = options.DEFAULT_TURN_TOKENS,
    llm_turn_s: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            help="Fixed model seconds per turn in the simulated wall-clock (default: measured).",
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            min=1, help="Episodes run at once per mode (a local model batches their turns)."
        ),
    ] = 1,
    max_calls_per_turn: Annotated[int | None, options.max_calls_per_turn()] = None,
    max_concurrency: Annotated[int | None, options.max_concurrency()] = None,
    per_source_concurrency: Annotated[int | None, options.per_source_concurrency()] = None,
    call_timeout: Annotated[float | None, options.call_timeout()] = None,
    summary: Annotated[
        Path | None,
        typer.Option(
            metavar="STEM",
            help="Also write every split's table and example queries to STEM.md and STEM.json "
            "(with --split all: one page for all splits).",
        ),
    ] = None,
    compare: Annotated[
        tuple[Path, Path] | None,
        typer.Option(
            metavar="A.json B.json",
            help="Evaluate nothing: print A minus B paired by task, with 95% intervals (two "
            "report.json files of this command, or train eval --out files).",
        ),
    ] = None,
) -> None:
    """Evaluate a policy on ToolEnv tasks in each agent mode: success, turns, critical path, recall."""  # noqa: E501 - typer's --help text
    console = Console()
    if compare is not None:
        try:
            compare_evaluations(*compare, console)
        except ParaAgentError as exc:
            _fail(exc)
        return
    try:
        asyncio.run(
            run_eval(
                policy=policy,
                base_url=base_url,
                modes=mode or ["all"],
                split=split,
                n=n_tasks,
                seed=seed,
                out=out,
                max_turns=max_turns,
                max_repeated_turns=max_repeated_turns,
                max_tokens=max_tokens,
                llm_turn_s=llm_turn_s,
                console=console,
                catalog=catalog,
                distractors=distractors,
                concurrency=concurrency,
                dispatch=options.dispatch_limits(
                    max_calls_per_turn, max_concurrency, per_source_concurrency, call_timeout
                ),
                summary=summary,
                families=family,
                prefetch_tools=prefetch_tools,
                command=_command_line(
                    policy=policy,
                    base_url=base_url,
                    mode=",".join(mode) if mode else None,
                    catalog=catalog,
                    split=split,
                    family=",".join(family) if family else None,
                    prefetch_tools=prefetch_tools or None,
                    n_tasks=n_tasks,
                    seed=seed,
                    distractors=distractors,
                    max_turns=max_turns,
                    max_repeated_turns=max_repeated_turns,
                    max_tokens=max_tokens,
                    max_calls_per_turn=max_calls_per_turn,
                    llm_turn_s=llm_turn_s,
                    summary=summary,
                ),
            )
        )
    except ParaAgentError as exc:
        _fail(exc)

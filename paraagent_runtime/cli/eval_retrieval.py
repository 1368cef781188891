"""``paraagent eval retrieval``: the retrieval evaluation (single and multi-tool), wired by the CLI.

The evaluation lives in :mod:`paraagent_runtime.retrieval.evaluate`; this module composes its
distractor pool (the ToolEnv catalog, the built-in tools or a ToolSpec file), which the
retrieval package itself must not import, and shows the embedding progress. Each data set's pool
persists its embeddings in its own index sub-directory, saved in chunks, so a stopped run
resumes where it stopped.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from . import options
from .tool_catalogs import resolve_catalog

if TYPE_CHECKING:
    from ..retrieval.prefill import Progress as ProgressCallback

__all__ = ["eval_retrieval_command", "eval_retrieval_index_dir"]


def eval_retrieval_index_dir(
    index_dir: Path | None, distractors: str | None, dataset: str = "stabletoolbench"
) -> Path:
    """Where the evaluation persists one pool's embeddings: one sub-directory per pool.

    Args:
        index_dir: An explicit root, or ``None`` for the default index directory.
        distractors: The distractor catalog label (``None``: the data set's tools alone).
        dataset: The query set whose pool it is.
    """
    from ..retrieval import default_index_dir

    root = index_dir or default_index_dir()
    return root / f"eval-{dataset}-{distractors or 'none'}"


def eval_retrieval_command(
    data: Annotated[
        Path | None,
        typer.Option(
            help="Shared data folder holding stabletoolbench/ and seal-tools/ "
            "(default: $PARAAGENT_DATA_DIR, else <repo>/../shared/data)."
        ),
    ] = None,
    sets: Annotated[
        str, typer.Option(help="Comma-separated query sets: stabletoolbench, seal-tools.")
    ] = "stabletoolbench,seal-tools",
    out: Annotated[Path, options.out("Where to write the JSON report.")] = Path(
        "runs/eval_retrieval"
    ),
    model: Annotated[
        str | None,
        typer.Option("--encoder", help="Local sentence-transformers model directory."),
    ] = None,
    index_dir: Annotated[
        Path | None,
        typer.Option(help="Index root; embeddings of each pool persist in a sub-directory."),
    ] = None,
    distractors: Annotated[
        str | None,
        typer.Option(
            help="Add distractor tools to every pool: toolenv (the full ToolEnv catalog, "
            "~65k tools; its copies of the evaluated tools are left out), builtin, or a tools "
            "file (.jsonl or .json)."
        ),
    ] = None,
    reranker: Annotated[
        Path | None, typer.Option(help="Local cross-encoder directory for re-ranking.")
    ] = None,
) -> None:
    """NDCG/Recall/Completeness@k of BM25, dense, hybrid and coverage, single and multi-tool."""
    from ..retrieval import CrossEncoderReranker, HybridToolSearch, RetrievalConfig
    from ..retrieval.evaluate import evaluate_retrieval, report_table, write_report
    from ..retrieval.querysets import load_query_sets

    benches = load_query_sets(
        data, parts=("dev", "test"), sets=[name.strip() for name in sets.split(",") if name]
    )
    extra = resolve_catalog(distractors) if distractors else None
    scorer = CrossEncoderReranker(reranker) if reranker else None

    def search_for(dataset: str) -> HybridToolSearch:
        directory = eval_retrieval_index_dir(index_dir, extra.label if extra else None, dataset)
        return HybridToolSearch(RetrievalConfig(model=model, index_dir=directory), reranker=scorer)

    console = Console()
    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeRemainingColumn(), console=console) as progress:

        def on_progress(dataset: str) -> ProgressCallback:
            task = progress.add_task(f"embedding {dataset}", total=None)

            def update(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            return update

        report = asyncio.run(
            evaluate_retrieval(
                benches,
                search_for=search_for,
                distractors=extra.tools if extra else (),
                on_progress=on_progress,
            )
        )
    console.print(report_table(report, "test"))
    console.print(f"tuned on {report.queries['dev']} dev queries: {report.settings}")
    if report.distractors_dropped:
        console.print(f"left out {report.distractors_dropped} distractors copying pool tools")
    for path in write_report(report, out):
        console.print(f"wrote {path}")

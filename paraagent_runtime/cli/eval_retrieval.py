"""``paraagent eval retrieval``: the StableToolBench retrieval evaluation, wired by the CLI.

The evaluation lives in :mod:`paraagent_runtime.retrieval.evaluate`; this module composes its
distractor pool (the ToolEnv catalog, the built-in tools or a ToolSpec file), which the
retrieval package itself must not import.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from . import options
from .tool_catalogs import resolve_catalog

__all__ = ["eval_retrieval_command", "eval_retrieval_index_dir"]


def eval_retrieval_index_dir(index_dir: Path | None, distractors: str | None) -> Path:
    """Where the evaluation persists its pool's embeddings: one sub-directory per pool.

    Args:
        index_dir: An explicit root, or ``None`` for the default index directory.
        distractors: The distractor catalog label (``None``: StableToolBench alone).
    """
    from ..retrieval import default_index_dir

    root = index_dir or default_index_dir()
    return root / f"eval-stabletoolbench-{distractors or 'none'}"


def eval_retrieval_command(
    data: Annotated[Path, typer.Option(help="StableToolBench data folder.")] = Path(
        "../shared/data/stabletoolbench"
    ),
    out: Annotated[Path, options.out("Where to write JSON and PNG.")] = Path("runs/eval_retrieval"),
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
            help="Add distractor tools to the pool: toolenv (the full ToolEnv catalog, "
            "~65k tools), builtin, or a tools file (.jsonl or .json)."
        ),
    ] = None,
    reranker: Annotated[
        Path | None, typer.Option(help="Local cross-encoder directory for re-ranking.")
    ] = None,
) -> None:
    """Recall/NDCG/Completeness@{1,3,5,10} of BM25, dense and hybrid retrieval."""
    from ..retrieval import CrossEncoderReranker, HybridToolSearch, RetrievalConfig
    from ..retrieval.evaluate import (
        TOOLOMNI_CONTEXT,
        evaluate_retrieval,
        report_table,
        write_report,
    )

    extra = resolve_catalog(distractors) if distractors else None
    directory = eval_retrieval_index_dir(index_dir, extra.label if extra else None)
    search = HybridToolSearch(
        RetrievalConfig(model=model, index_dir=directory),
        reranker=CrossEncoderReranker(reranker) if reranker else None,
    )
    report = asyncio.run(
        evaluate_retrieval(data, search=search, distractors=extra.tools if extra else ())
    )
    console = Console()
    console.print(report_table(report, "test"))
    console.print(f"fusion tuned on {report.dev_queries} dev queries: {report.tuned}")
    console.print(f"context only: {TOOLOMNI_CONTEXT}")
    for path in write_report(report, out):
        console.print(f"wrote {path}")

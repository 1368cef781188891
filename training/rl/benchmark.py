"""Time one RL training forward/backward: all logits vs. trained positions only, per precision.

``python -m training.rl.benchmark --model smollm2 --length 1024 --lora`` prints one JSON object,
then a table. For each ``--dtypes`` entry (default ``float32`` and ``bfloat16``, measured in turns
in one run, so the ratios share the machine's load) it times a step with every position's logits
and one with the logits at trained positions only (``logits_to_keep``), and reports both ratios:
kept vs. full, and each precision against the first. The row mimics an agent episode: a long prompt
(system prompt and tool list), then assistant turns separated by tool responses;
``--assistant-share`` sets the trained share. ``--lora`` trains a fresh LoRA adapter as
``paraagent train rl`` does (peft keeps the adapter in float32 on a bfloat16 base).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

from training.algo import kept_logprobs, logit_positions, sequence_logprobs

from .config import RLConfig
from .model import fresh_adapter

__all__ = ["DTYPES", "episode_mask", "table", "time_step"]

DTYPES = ("float32", "bfloat16", "float16")
"""Precisions the benchmark can compare."""


def episode_mask(length: int, assistant_share: float, turns: int = 3) -> torch.Tensor:
    """A ``[1, length]`` loss mask: a prompt of half the row, then ``turns`` assistant spans."""
    mask = torch.zeros(1, length, dtype=torch.bool)
    span = max(1, int(length * assistant_share / turns))
    start = length // 2
    stride = (length - start) // turns
    for turn in range(turns):
        first = start + turn * stride
        mask[0, first : first + span] = True
    return mask


def time_step(
    model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor, *, kept: bool
) -> float:
    """Seconds of one forward, masked log-prob sum and backward."""
    model.zero_grad(set_to_none=True)
    started = time.perf_counter()
    if kept:
        positions = logit_positions(mask)
        logits = model(input_ids=ids, logits_to_keep=positions, use_cache=False).logits
        logprobs = kept_logprobs(logits, ids, positions)
    else:
        logprobs = sequence_logprobs(model(input_ids=ids, use_cache=False).logits, ids)
    (-(logprobs * mask).sum()).backward()
    return time.perf_counter() - started


def _load(source: str | Path, dtype: str, lora: bool) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype))
    return (fresh_adapter(model, RLConfig()) if lora else model).train()


def table(report: dict[str, Any]) -> Table:
    """The report as a rich table: one row per precision."""
    result = Table(
        title=(
            f"{report['model']}{' + LoRA' if report['lora'] else ''}, one {report['length']}-token "
            f"row, {report['trained_tokens']} trained tokens, {report['threads']} threads"
        )
    )
    for header in (
        "dtype",
        "all logits s",
        "kept logits s",
        "kept vs all",
        "vs " + report["results"][0]["dtype"],
    ):
        result.add_column(header, justify="right")
    for row in report["results"]:
        result.add_row(
            row["dtype"],
            f"{row['full_logits_s']:.3f}",
            f"{row['kept_logits_s']:.3f}",
            f"{row['kept_speedup']:.2f}x",
            f"{row['speedup_vs_first']:.2f}x",
        )
    return result


def main() -> None:
    """Run the comparison; print the JSON report, then the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="tiny, smollm2 or a model directory")
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--assistant-share", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--dtypes", default="float32,bfloat16", help=f"comma-separated, of {', '.join(DTYPES)}"
    )
    parser.add_argument("--lora", action="store_true", help="train a fresh LoRA adapter")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.model == "tiny":
        from paraagent_runtime.policy.tiny import build_tiny_model

        source: str | Path = build_tiny_model(Path(tempfile.mkdtemp()) / "tiny")
    elif args.model == "smollm2":
        from paraagent_runtime.policy.smollm2 import ensure_smollm2

        source = ensure_smollm2()
    else:
        source = args.model
    dtypes = [name.strip() for name in args.dtypes.split(",") if name.strip()]
    unknown = sorted(set(dtypes) - set(DTYPES)) or ([] if dtypes else ["(none)"])
    if unknown:
        parser.error(f"--dtypes: unknown {', '.join(unknown)}; use {', '.join(DTYPES)}")
    models = {dtype: _load(source, dtype, args.lora) for dtype in dtypes}
    vocab = next(iter(models.values())).config.vocab_size
    ids = torch.randint(0, vocab, (1, args.length), generator=torch.Generator().manual_seed(0))
    mask = episode_mask(args.length, args.assistant_share)
    timings: dict[str, dict[str, list[float]]] = {d: {"full": [], "kept": []} for d in dtypes}
    for model in models.values():
        time_step(model, ids, mask, kept=True)  # warm-up
    for _ in range(args.repeats):  # interleaved: every precision sees the same load
        for dtype, model in models.items():
            timings[dtype]["full"].append(time_step(model, ids, mask, kept=False))
            timings[dtype]["kept"].append(time_step(model, ids, mask, kept=True))
    first_kept = statistics.median(timings[dtypes[0]]["kept"])
    results = []
    for dtype in dtypes:
        full, kept = (statistics.median(timings[dtype][k]) for k in ("full", "kept"))
        results.append(
            {
                "dtype": dtype,
                "full_logits_s": round(full, 3),
                "kept_logits_s": round(kept, 3),
                "kept_speedup": round(full / kept, 2),
                "speedup_vs_first": round(first_kept / kept, 2),
            }
        )
    report = {
        "model": str(args.model),
        "lora": args.lora,
        "length": args.length,
        "threads": args.threads,
        "trained_tokens": int(mask.sum()),
        "results": results,
    }
    print(json.dumps(report))
    Console().print(table(report))


if __name__ == "__main__":
    main()

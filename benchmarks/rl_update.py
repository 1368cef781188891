"""RL update benchmark: one training forward/backward, all logits vs. trained positions only.

``python -m benchmarks.rl_update --model smollm2 --length 1024 --lora`` prints one JSON object,
then a table. For each ``--dtypes`` entry (default ``float32`` and ``bfloat16``, measured in turns
in one run, so the ratios share the machine's load) it times a step with every position's logits
and one with the logits at trained positions only (``logits_to_keep``), and reports both ratios:
kept vs. full, and each precision against the first. The row mimics an agent episode: a long prompt
(system prompt and tool list), then assistant turns separated by tool responses;
``--assistant-share`` sets the trained share. ``--lora`` trains a fresh LoRA adapter as
``paraagent train rl`` does (peft keeps the adapter in float32 on a bfloat16 base);
``--adapter DIR`` trains a saved one instead.

Speed is half of the choice; ``--episodes FILE`` (episodes written by ``paraagent train eval
--trajectory``) adds fidelity: on each episode's last turn (its prompt and sampled tokens, real
contexts rather than the random timing row) every precision's next-token distribution is compared
with the first's (mean KL per sampled token) and scores the sampled tokens (mean NLL).
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

from paraagent_runtime.policy.transformers_local import load_causal_lm, quiet_peft
from training.algo import kept_logprobs, logit_positions, sequence_logprobs
from training.rl.config import RLConfig
from training.rl.model import fresh_adapter, without_dropout

__all__ = [
    "DTYPES",
    "episode_mask",
    "fidelity",
    "load_model",
    "recorded_turns",
    "table",
    "time_step",
]

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


def recorded_turns(path: Path, limit: int) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, sampled ids) of the last turn of up to ``limit`` recorded episodes.

    Raises:
        ValueError: a line is not an episode with token ids (written without them).
    """
    turns = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if len(turns) == limit:
                break
            try:
                last = json.loads(line)["turns"][-1]
                prompt, sampled = list(last["prompt_token_ids"]), list(last["token_ids"])
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not an episode with token ids") from exc
            if prompt and sampled:
                turns.append((prompt, sampled))
    return turns


def fidelity(
    models: dict[str, torch.nn.Module], turns: list[tuple[list[int], list[int]]]
) -> dict[str, dict[str, float]]:
    """Per precision: mean KL(first precision || it) per sampled token, and the tokens' mean NLL.

    The first model in ``models`` is the reference (its KL is 0).
    """
    kl: dict[str, list[float]] = {dtype: [] for dtype in models}
    nll: dict[str, list[float]] = {dtype: [] for dtype in models}
    with torch.inference_mode():
        for prompt, sampled in turns:
            ids = torch.tensor([prompt + sampled])
            positions = torch.arange(len(prompt) - 1, len(prompt) - 1 + len(sampled))
            reference = None
            for dtype, model in models.items():
                logits = model(input_ids=ids, use_cache=False).logits[0, positions].float()
                logprobs = torch.log_softmax(logits, dim=-1)
                if reference is None:
                    reference = logprobs
                divergence = (reference.exp() * (reference - logprobs)).sum(-1)
                kl[dtype] += divergence.tolist()
                nll[dtype] += (-logprobs[torch.arange(len(sampled)), sampled]).tolist()
    return {
        dtype: {"kl_vs_first": statistics.fmean(kl[dtype]), "nll": statistics.fmean(nll[dtype])}
        for dtype in models
    }


def load_model(
    source: str | Path, dtype: str, *, lora: bool = False, adapter: Path | None = None
) -> torch.nn.Module:
    """The model a timed step trains, loaded as ``paraagent train rl`` trains it.

    Args:
        source: A local model directory.
        dtype: One of :data:`DTYPES`.
        lora: Train a fresh LoRA adapter (the ``RLConfig`` defaults) instead of all weights.
        adapter: Train this saved PEFT adapter instead (it wins over ``lora``).

    Returns:
        The model in train mode, without dropout (a saved adapter may carry LoRA dropout, which
        RL turns off).
    """
    model = load_causal_lm(source, dtype=getattr(torch, dtype))
    if adapter is not None:
        from peft import PeftModel

        with quiet_peft():
            model = PeftModel.from_pretrained(model, adapter, is_trainable=True)
    elif lora:
        model = fresh_adapter(model, RLConfig())
    without_dropout(model)
    return model.train()


def table(report: dict[str, Any]) -> Table:
    """The report as a rich table: one row per precision."""
    result = Table(
        title=(
            f"{report['model']}{' + LoRA' if report['lora'] else ''}, one {report['length']}-token "
            f"row, {report['trained_tokens']} trained tokens, {report['threads']} threads"
        )
    )
    first = report["results"][0]["dtype"]
    faithful = "kl_vs_first" in report["results"][0]
    headers = ["dtype", "all logits s", "kept logits s", "kept vs all", f"vs {first}"]
    if faithful:
        headers += [f"KL vs {first} / token", "NLL of sampled"]
    for header in headers:
        result.add_column(header, justify="right")
    for row in report["results"]:
        cells = [
            row["dtype"],
            f"{row['full_logits_s']:.3f}",
            f"{row['kept_logits_s']:.3f}",
            f"{row['kept_speedup']:.2f}x",
            f"{row['speedup_vs_first']:.2f}x",
        ]
        if faithful:
            cells += [f"{row['kl_vs_first']:.5f}", f"{row['nll']:.4f}"]
        result.add_row(*cells)
    return result


def main(argv: list[str] | None = None) -> None:
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
    parser.add_argument("--adapter", type=Path, help="train this saved LoRA adapter instead")
    parser.add_argument(
        "--episodes", type=Path, help="episodes JSONL (train eval --trajectory): add fidelity"
    )
    parser.add_argument("--max-episodes", type=int, default=16)
    args = parser.parse_args(argv)
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
    turns = []
    if args.max_episodes < 1:
        parser.error(f"--max-episodes: need >= 1, got {args.max_episodes}")
    if args.episodes is not None:
        try:
            turns = recorded_turns(args.episodes, args.max_episodes)
        except (OSError, ValueError) as exc:
            parser.error(f"--episodes: {exc}")
        if not turns:
            parser.error(f"--episodes: {args.episodes} has no turn with token ids")
    models = {
        dtype: load_model(source, dtype, lora=args.lora, adapter=args.adapter) for dtype in dtypes
    }
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
    faithful = fidelity(models, turns) if turns else {}
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
            | faithful.get(dtype, {})
        )
    report = {
        "model": str(args.model),
        "lora": args.lora or args.adapter is not None,
        "adapter": str(args.adapter) if args.adapter is not None else None,
        "episodes": len(turns),
        "length": args.length,
        "threads": args.threads,
        "trained_tokens": int(mask.sum()),
        "results": results,
    }
    print(json.dumps(report))
    Console().print(table(report))


if __name__ == "__main__":
    main()

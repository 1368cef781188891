"""Time one RL training forward/backward with all logits vs. logits at trained positions only.

``python -m training.rl.benchmark --model tiny --length 1024`` prints JSON with both timings and
their ratio. The row mimics an agent episode: a long prompt (system prompt and tool list), then
assistant turns separated by tool responses; ``--assistant-share`` sets the trained share.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

from training.algo import kept_logprobs, logit_positions, sequence_logprobs

__all__ = ["episode_mask", "time_step"]


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


def main() -> None:
    """Run the comparison and print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="tiny", help="tiny, smollm2 or a model directory")
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--assistant-share", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from transformers import AutoModelForCausalLM

    if args.model == "tiny":
        from paraagent_runtime.policy.tiny import build_tiny_model

        source: str | Path = build_tiny_model(Path(tempfile.mkdtemp()) / "tiny")
    elif args.model == "smollm2":
        from paraagent_runtime.policy.smollm2 import ensure_smollm2

        source = ensure_smollm2()
    else:
        source = args.model
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32).train()
    ids = torch.randint(
        0, model.config.vocab_size, (1, args.length), generator=torch.Generator().manual_seed(0)
    )
    mask = episode_mask(args.length, args.assistant_share)
    time_step(model, ids, mask, kept=True)  # warm-up
    full, kept = [], []
    for _ in range(args.repeats):
        full.append(time_step(model, ids, mask, kept=False))
        kept.append(time_step(model, ids, mask, kept=True))
    result = {
        "model": str(args.model),
        "length": args.length,
        "trained_tokens": int(mask.sum()),
        "full_logits_s": round(statistics.median(full), 3),
        "kept_logits_s": round(statistics.median(kept), 3),
        "speedup": round(statistics.median(full) / statistics.median(kept), 2),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()

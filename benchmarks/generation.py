"""Generation benchmark: throughput of batched local generation versus one request at a time.

Does collecting concurrent ``complete()`` calls into one left-padded ``model.generate`` pay off?
Run ``python -m benchmarks.generation`` (the lead runs it on an idle machine; ``--requests 2
--max-tokens 4`` is a smoke run). It loads SmolLM2-135M-Instruct the way
``TransformersPolicy(None)`` does and, for each ``max_batch_size`` (1, 4, 8 by default), sends the
same N concurrent greedy requests: realistic ParaAct prompts (~700 tokens: the system prompt with
preloaded ToolEnv tools, plus one task query each). It reports generated tokens/s, the speed-up
over batch size 1, and whether each setting's tokens match batch size 1's (greedy rows should
agree; float rounding in padded matmuls can rarely flip a near-tie).

``--turns N`` (N > 1) measures the prefix cache instead: N-turn episodes (each turn answered by
a ~150-token tool result) run concurrently at the largest batch size, once with the prefix cache
off and once on, reporting generated tokens/s, the prompt tokens actually prefilled, and whether
the greedy tokens agree.

``--device cuda --dtype bfloat16`` runs it on a GPU.

Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mcp_servers.toolenv import ToolEnv, generate_tasks
from paraagent_runtime import Completion, Message, SamplingParams, Toolspace
from paraagent_runtime.policy import TransformersPolicy
from paraagent_runtime.prompts import system_prompt


@dataclass(frozen=True)
class Placement:
    """Where the benchmarked model runs: a torch device and a weights dtype."""

    device: str = "cpu"
    dtype: str = "float32"

    def policy(self, **options: Any) -> TransformersPolicy:
        """SmolLM2-135M-Instruct as ``TransformersPolicy(None)`` loads it, placed here."""
        return TransformersPolicy(None, device=self.device, dtype=self.dtype, **options)


async def _prompts(policy: TransformersPolicy, requests: int, target: int) -> list[list[Message]]:
    """One conversation per request: the ParaAct system prompt grown to ~``target`` tokens."""
    toolspace = Toolspace(ToolEnv.builtin().sources)
    await toolspace.refresh()
    tools = sorted(toolspace.tools.values(), key=lambda spec: spec.name)
    tasks = generate_tasks(requests, seed=0, split="test-seen")
    preloaded = []
    for spec in tools:
        preloaded.append(spec)
        probe = [
            Message(role="system", content=system_prompt(preloaded=preloaded)),
            Message(role="user", content=tasks[0].query),
        ]
        if len(policy.encode_messages(probe)) >= target:
            break
    system = Message(role="system", content=system_prompt(preloaded=preloaded))
    return [[system, Message(role="user", content=task.query)] for task in tasks]


async def _measure(
    batch_size: int, prompts: list[list[Message]], sampling: SamplingParams, placement: Placement
) -> tuple[dict[str, Any], list[Completion]]:
    policy = placement.policy(max_batch_size=batch_size)
    await asyncio.to_thread(policy.load)
    await policy.complete(prompts[0], sampling=sampling.model_copy(update={"max_tokens": 2}))
    before = policy.batch_stats.batches
    started = time.perf_counter()
    completions = await asyncio.gather(
        *(policy.complete(prompt, sampling=sampling) for prompt in prompts)
    )
    wall = time.perf_counter() - started
    generated = sum(len(completion.token_ids or []) for completion in completions)
    row = {
        "max_batch_size": batch_size,
        "generate_calls": policy.batch_stats.batches - before,
        "generated_tokens": generated,
        "wall_s": round(wall, 3),
        "tokens_per_s": round(generated / wall, 2),
    }
    await policy.aclose()
    return row, completions


async def run(
    requests: int,
    max_tokens: int,
    batch_sizes: list[int],
    target: int,
    placement: Placement | None = None,
) -> dict:
    """Measure every batch size on the same prompts; the first batch size is the baseline."""
    placement = placement or Placement()
    reference = TransformersPolicy(None)
    await asyncio.to_thread(reference.load)
    prompts = await _prompts(reference, requests, target)
    prompt_lengths = [len(reference.encode_messages(prompt)) for prompt in prompts]
    await reference.aclose()
    sampling = SamplingParams(max_tokens=max_tokens, temperature=0.0)
    rows: list[dict[str, Any]] = []
    baseline: list[Completion] | None = None
    for batch_size in batch_sizes:
        row, completions = await _measure(batch_size, prompts, sampling, placement)
        if baseline is None:
            baseline = completions
        row["speedup"] = round(row["tokens_per_s"] / rows[0]["tokens_per_s"], 2) if rows else 1.0
        row["greedy_match"] = sum(
            a.token_ids == b.token_ids for a, b in zip(completions, baseline, strict=True)
        ) / len(prompts)
        rows.append(row)
    return _report(
        placement,
        requests=requests,
        max_tokens=max_tokens,
        prompt_tokens={"min": min(prompt_lengths), "max": max(prompt_lengths)},
        results=rows,
    )


def _observation(turn: int, task: str) -> str:
    """A tool result of about 150 tokens, different per turn and task."""
    rows = ", ".join(f'{{"item": {i}, "turn": {turn}, "status": "ok"}}' for i in range(12))
    return f'<tool_response>{{"query": {json.dumps(task[:60])}, "rows": [{rows}]}}'


async def _episodes(
    policy: TransformersPolicy, prompts: list[list[Message]], sampling: SamplingParams, turns: int
) -> list[list[Completion]]:
    async def episode(prompt: list[Message]) -> list[Completion]:
        messages, completions = list(prompt), []
        for turn in range(turns):
            completion = await policy.complete(messages, sampling=sampling)
            completions.append(completion)
            messages += [
                Message(role="assistant", content=completion.text),
                Message(role="tool", content=_observation(turn, prompt[-1].content)),
            ]
        return completions

    return list(await asyncio.gather(*(episode(prompt) for prompt in prompts)))


async def run_multiturn(
    requests: int,
    max_tokens: int,
    batch_size: int,
    target: int,
    turns: int,
    placement: Placement | None = None,
) -> dict:
    """Multi-turn episodes with the prefix cache off, then on (same prompts, greedy)."""
    placement = placement or Placement()
    reference = TransformersPolicy(None)
    await asyncio.to_thread(reference.load)
    prompts = await _prompts(reference, requests, target)
    await reference.aclose()
    sampling = SamplingParams(max_tokens=max_tokens, temperature=0.0)
    rows: list[dict[str, Any]] = []
    baseline: list[list[Completion]] | None = None
    for cache_mb in (0, 1024):
        policy = placement.policy(max_batch_size=batch_size, prefix_cache_mb=cache_mb)
        await asyncio.to_thread(policy.load)
        await policy.complete(prompts[0], sampling=sampling.model_copy(update={"max_tokens": 2}))
        policy.clear_prefix_cache()
        started = time.perf_counter()
        episodes = await _episodes(policy, prompts, sampling, turns)
        wall = time.perf_counter() - started
        flat = [completion for episode in episodes for completion in episode]
        stats = policy.prefix_cache_stats
        prompt_tokens = sum(completion.prompt_tokens for completion in flat)
        reused = stats.reused_tokens if stats is not None else 0
        generated = sum(len(completion.token_ids or []) for completion in flat)
        baseline = baseline or episodes
        rows.append(
            {
                "prefix_cache_mb": cache_mb,
                "generated_tokens": generated,
                "prompt_tokens": prompt_tokens,
                "prefilled_tokens": prompt_tokens - reused,
                "wall_s": round(wall, 3),
                "tokens_per_s": round(generated / wall, 2),
                "speedup": round(rows[0]["wall_s"] / wall, 2) if rows else 1.0,
                "greedy_match": sum(
                    [c.token_ids for c in a] == [c.token_ids for c in b]
                    for a, b in zip(episodes, baseline, strict=True)
                )
                / len(prompts),
            }
        )
        await policy.aclose()
    return _report(
        placement,
        requests=requests,
        turns=turns,
        max_batch_size=batch_size,
        max_tokens=max_tokens,
        results=rows,
    )


def _report(placement: Placement, **fields: Any) -> dict[str, Any]:
    """A report: the model and machine, then ``fields``."""
    import torch

    return {
        "model": "SmolLM2-135M-Instruct",
        "device": placement.device,
        "dtype": placement.dtype,
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        **fields,
    }


def _table(title: str, headers: tuple[str, ...], rows: list[list[str]]) -> Table:
    result = Table(title=title)
    for header in headers:
        result.add_column(header, justify="right")
    for row in rows:
        result.add_row(*row)
    return result


def _common_cells(row: dict[str, Any]) -> list[str]:
    """Tokens, wall time, tokens/s, speed-up, greedy agreement: the last columns of both tables."""
    return [
        str(row["generated_tokens"]),
        f"{row['wall_s']:.2f}",
        f"{row['tokens_per_s']:.1f}",
        f"{row['speedup']:.2f}x",
        f"{row['greedy_match']:.0%}",
    ]


_COMMON_HEADERS = ("tokens", "wall s", "tokens/s", "speed-up")


def multiturn_table(report: dict) -> Table:
    """The prefix-cache comparison as a rich table."""
    return _table(
        f"{report['model']}, {report['requests']} concurrent {report['turns']}-turn greedy "
        f"episodes, max batch {report['max_batch_size']}, {report['max_tokens']} new tokens/turn",
        ("prefix cache MB", "prompt tokens", "prefilled", *_COMMON_HEADERS, "greedy = no cache"),
        [
            [str(row["prefix_cache_mb"]), str(row["prompt_tokens"]), str(row["prefilled_tokens"])]
            + _common_cells(row)
            for row in report["results"]
        ],
    )


def table(report: dict) -> Table:
    """The results as a rich table."""
    prompt = report["prompt_tokens"]
    return _table(
        f"{report['model']}, {report['requests']} concurrent greedy requests, "
        f"{prompt['min']}-{prompt['max']} prompt tokens, {report['max_tokens']} new tokens",
        ("max batch", "generate calls", *_COMMON_HEADERS, "greedy = batch 1"),
        [
            [str(row["max_batch_size"]), str(row["generate_calls"])] + _common_cells(row)
            for row in report["results"]
        ],
    )


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=8, help="concurrent complete() calls")
    parser.add_argument("--max-tokens", type=int, default=48, help="new tokens per request")
    parser.add_argument(
        "--batch-sizes", default="1,4,8", help="comma-separated max_batch_size values"
    )
    parser.add_argument("--prompt-tokens", type=int, default=700, help="approximate prompt size")
    parser.add_argument(
        "--turns", type=int, default=1, help="> 1: compare the prefix cache off/on over episodes"
    )
    parser.add_argument("--device", default="cpu", help="torch device of the model (cpu, cuda)")
    parser.add_argument("--dtype", default="float32", help="weights dtype (float32, bfloat16)")
    parser.add_argument("--json", help="also write the JSON report to this file")
    args = parser.parse_args()
    placement = Placement(args.device, args.dtype)
    batch_sizes = [int(value) for value in args.batch_sizes.split(",") if value.strip()]
    if args.turns > 1:
        report = asyncio.run(
            run_multiturn(
                args.requests,
                args.max_tokens,
                max(batch_sizes),
                args.prompt_tokens,
                args.turns,
                placement,
            )
        )
        render = multiturn_table
    else:
        report = asyncio.run(
            run(args.requests, args.max_tokens, batch_sizes, args.prompt_tokens, placement)
        )
        render = table
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    Console().print(render(report))


if __name__ == "__main__":
    main()

"""Generation benchmark: the local backends side by side, and batching versus one at a time.

Run ``python -m benchmarks.generation`` (the lead runs it on an idle machine; ``--requests 2
--max-tokens 4`` is a smoke run). Every backend (``--backends``: ``transformers``, and ONNX
Runtime GenAI at a precision, ``onnx-fp32``, ``onnx-int8``, ``onnx-int4``, each also as
``onnx-<precision>-nodraft``: greedy decoding without speculative drafts, and
``onnx-<precision>-cold``: drafts from an empty memory, none kept) loads the same model
(``--model paraagent``: SmolLM2-135M-Instruct with the shipped adapter; ``base``: without) and
gets the same N concurrent greedy requests: realistic ParaAct prompts (~700 tokens: the system
prompt with preloaded ToolEnv tools, plus one task query each). transformers runs them at each
``max_batch_size`` (1, 4, 8 by default); ONNX Runtime GenAI serves requests one at a time,
reusing the shared system prompt. Each row reports generated tokens/s, the speed-up over the
first row (transformers at batch size 1), whether its tokens match the first row's (greedy rows
should agree; float rounding and quantization can flip a near-tie), and the first-token latency
of one request alone: cold (nothing cached) and warm (another prompt with the same system
prompt ran before).

``--turns N`` (N > 1) measures prefix reuse instead: N-turn episodes (each turn answered by a
~150-token tool result) run concurrently, on transformers with its prefix cache off and on (at
the largest batch size) and on each ONNX backend, reporting generated tokens/s, the prompt
tokens actually prefilled, and whether the greedy tokens agree with the first row's.

``--constrained`` measures grammar-constrained decoding instead (see
:mod:`paraagent_runtime.policy.constrained`): on each backend the same greedy requests run one at a
time, free and constrained in turn after a one-token turn that caches the prompt (so both decode
from a cached prompt), under the turn grammar of the prompt's preloaded tools and the meta-tools,
reporting tokens/s of each, their ratio, the grammar's setup per turn (compiled on a
toolset's first turn, copied from the cache after) and how many turns parse strictly.

``--episodes N`` runs ``make run``'s workload instead: the agent on the first N built-in tasks
(greedy, 384 tokens per turn), each task on every backend in turn (default
``onnx-fp32-nodraft,onnx-fp32-cold,onnx-fp32``: no drafts, a fresh install's first run, and the
default with the draft memory earlier runs kept), reporting seconds per episode, tokens/s over
the model's seconds, success, whether the turns equal the first row's, and the accepted share of
drafts.

``--device cuda --dtype bfloat16`` runs it on a GPU.

Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mcp_servers.toolenv import ToolEnv, builtin_tasks, generate_tasks
from paraagent_runtime import (
    DEFAULT_TURN_TOKENS,
    Agent,
    AgentConfig,
    Completion,
    Episode,
    Message,
    Policy,
    SamplingParams,
    Toolspace,
    check_answer,
)
from paraagent_runtime.actions import parse_turn
from paraagent_runtime.meta import META_TOOL_SPECS
from paraagent_runtime.policy import policy_from_spec
from paraagent_runtime.policy.constrained import ToolSchema, TurnFormat
from paraagent_runtime.prompts import system_prompt
from paraagent_runtime.search import default_tool_search, index_scope

ONNX_PRECISIONS = ("fp32", "int8", "int4")
REQUEST_TOKENS = 48
"""New tokens per request of the one-turn measurements (``--max-tokens`` overrides)."""
NO_DRAFT = "-nodraft"
"""Suffix of an ONNX backend that decodes greedy turns without speculative drafts."""
COLD = "-cold"
"""Suffix of an ONNX backend whose draft memory starts empty (a fresh install's first run)."""
DRAFT_VARIANTS: dict[str, dict[str, Any]] = {
    "": {},
    NO_DRAFT[1:]: {"draft_tokens": 0},
    COLD[1:]: {"keep_drafts": False},
}
"""Each ONNX backend suffix's policy options (no suffix: the default, memory kept on disk)."""


@dataclass(frozen=True)
class Placement:
    """Where the benchmarked model runs: the model, a torch device and a weights dtype.

    ``model`` is ``paraagent`` (SmolLM2-135M-Instruct with the shipped adapter) or ``base``
    (without). The device and dtype apply to transformers; ONNX Runtime GenAI runs on the CPU.
    """

    device: str = "cpu"
    dtype: str = "float32"
    model: str = "paraagent"

    def policy(self, backend: str, **options: Any) -> Policy:
        """The model on ``backend`` (``transformers`` or ``onnx-<precision>[-nodraft]``), here."""
        target = "paraagent" if self.model == "paraagent" else ""
        if backend == "transformers":
            return policy_from_spec(
                f"transformers:{target}", device=self.device, dtype=self.dtype, **options
            )
        precision, variant = _onnx_parts(backend)
        options.update(DRAFT_VARIANTS[variant])
        return policy_from_spec(f"onnx:{target}", precision=precision, **options)


def _onnx_parts(backend: str) -> tuple[str, str]:
    """An ``onnx-<precision>[-<variant>]`` backend's precision and variant (``""``: none)."""
    precision, _, variant = backend.removeprefix("onnx-").partition("-")
    return precision, variant


def known_backend(backend: str) -> bool:
    """Whether ``backend`` names a backend :meth:`Placement.policy` builds."""
    precision, variant = _onnx_parts(backend)
    return backend == "transformers" or (
        backend.startswith("onnx-") and precision in ONNX_PRECISIONS and variant in DRAFT_VARIANTS
    )


def _load(policy: Policy) -> None:
    policy.load()  # type: ignore[attr-defined]


def _encode(policy: Policy, messages: list[Message]) -> list[int]:
    return policy.encode_messages(messages)  # type: ignore[attr-defined]


async def _prompts(policy: Policy, requests: int, target: int) -> list[list[Message]]:
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
        if len(_encode(policy, probe)) >= target:
            break
    system = Message(role="system", content=system_prompt(preloaded=preloaded))
    return [[system, Message(role="user", content=task.query)] for task in tasks]


async def _first_token(policy: Policy, prompts: list[list[Message]]) -> tuple[float, float]:
    """Seconds to the first streamed text of one request alone: cold, then warm."""
    policy.clear_prefix_cache()  # type: ignore[attr-defined]
    latencies = []
    for prompt in prompts[:2]:
        first: list[float] = []
        started = time.perf_counter()

        def seen(_: str, first: list[float] = first, started: float = started) -> None:
            if not first:
                first.append(time.perf_counter() - started)

        await policy.complete(prompt, sampling=SamplingParams(max_tokens=4), on_text=seen)
        latencies.append(first[0] if first else time.perf_counter() - started)
    policy.clear_prefix_cache()  # type: ignore[attr-defined]
    return latencies[0], latencies[-1]


async def _measure(
    backend: str,
    batch_size: int,
    prompts: list[list[Message]],
    sampling: SamplingParams,
    placement: Placement,
) -> tuple[dict[str, Any], list[Completion]]:
    options = {"max_batch_size": batch_size} if backend == "transformers" else {}
    policy = placement.policy(backend, **options)
    await asyncio.to_thread(_load, policy)
    cold, warm = await _first_token(policy, prompts)
    await policy.complete(prompts[0], sampling=sampling.model_copy(update={"max_tokens": 2}))
    stats = policy.batch_stats  # type: ignore[attr-defined]
    before = stats.batches
    started = time.perf_counter()
    completions = await asyncio.gather(
        *(policy.complete(prompt, sampling=sampling) for prompt in prompts)
    )
    wall = time.perf_counter() - started
    generated = sum(len(completion.token_ids or []) for completion in completions)
    row = {
        "backend": backend,
        "max_batch_size": batch_size,
        "generate_calls": stats.batches - before,
        "generated_tokens": generated,
        "wall_s": round(wall, 3),
        "tokens_per_s": round(generated / wall, 2),
        "first_token_cold_s": round(cold, 3),
        "first_token_warm_s": round(warm, 3),
    }
    await policy.aclose()
    return row, completions


def _settings(backends: list[str], batch_sizes: list[int]) -> list[tuple[str, int]]:
    """Every (backend, batch size) to measure; ONNX Runtime GenAI serves one at a time."""
    return [
        (backend, size)
        for backend in backends
        for size in (batch_sizes if backend == "transformers" else [1])
    ]


def _agreement(
    completions: list[Completion] | list[list[Completion]],
    baseline: list[Completion] | list[list[Completion]],
) -> float:
    def tokens(item: Completion | list[Completion]) -> Any:
        if isinstance(item, list):
            return [completion.token_ids for completion in item]
        return item.token_ids

    same = sum(tokens(a) == tokens(b) for a, b in zip(completions, baseline, strict=True))
    return same / len(baseline)


async def _reference_prompts(
    requests: int, target: int, placement: Placement
) -> tuple[list[list[Message]], list[int]]:
    reference = placement.policy("transformers")
    await asyncio.to_thread(_load, reference)
    prompts = await _prompts(reference, requests, target)
    lengths = [len(_encode(reference, prompt)) for prompt in prompts]
    await reference.aclose()
    return prompts, lengths


async def run(
    requests: int,
    max_tokens: int,
    batch_sizes: list[int],
    target: int,
    placement: Placement | None = None,
    backends: list[str] | None = None,
) -> dict:
    """Measure every backend and batch size on the same prompts; the first row is the baseline."""
    placement = placement or Placement()
    prompts, prompt_lengths = await _reference_prompts(requests, target, placement)
    sampling = SamplingParams(max_tokens=max_tokens, temperature=0.0)
    rows: list[dict[str, Any]] = []
    baseline: list[Completion] | None = None
    for backend, batch_size in _settings(backends or ["transformers"], batch_sizes):
        row, completions = await _measure(backend, batch_size, prompts, sampling, placement)
        baseline = baseline or completions
        row["speedup"] = round(row["tokens_per_s"] / rows[0]["tokens_per_s"], 2) if rows else 1.0
        row["greedy_match"] = _agreement(completions, baseline)
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
    policy: Policy, prompts: list[list[Message]], sampling: SamplingParams, turns: int
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


def _reused_tokens(policy: Policy) -> int:
    stats = getattr(policy, "prefix_cache_stats", None)
    return stats.reused_tokens if stats is not None else 0


async def run_multiturn(
    requests: int,
    max_tokens: int,
    batch_size: int,
    target: int,
    turns: int,
    placement: Placement | None = None,
    backends: list[str] | None = None,
) -> dict:
    """Multi-turn episodes: transformers with the prefix cache off, then on; then ONNX backends."""
    placement = placement or Placement()
    prompts, _ = await _reference_prompts(requests, target, placement)
    sampling = SamplingParams(max_tokens=max_tokens, temperature=0.0)
    settings: list[tuple[str, Callable[[], Policy]]] = []
    for backend in backends or ["transformers"]:
        if backend == "transformers":
            settings += [
                (
                    f"transformers, prefix cache {cache_mb} MB",
                    lambda cache_mb=cache_mb: placement.policy(
                        "transformers", max_batch_size=batch_size, prefix_cache_mb=cache_mb
                    ),
                )
                for cache_mb in (0, 1024)
            ]
        else:
            settings.append(
                (
                    f"{backend}, {requests} slots",
                    lambda backend=backend: placement.policy(backend, slots=requests),
                )
            )
    rows: list[dict[str, Any]] = []
    baseline: list[list[Completion]] | None = None
    for label, build in settings:
        policy = build()
        await asyncio.to_thread(_load, policy)
        await policy.complete(prompts[0], sampling=sampling.model_copy(update={"max_tokens": 2}))
        policy.clear_prefix_cache()  # type: ignore[attr-defined]
        reused_before = _reused_tokens(policy)
        started = time.perf_counter()
        episodes = await _episodes(policy, prompts, sampling, turns)
        wall = time.perf_counter() - started
        flat = [completion for episode in episodes for completion in episode]
        prompt_tokens = sum(completion.prompt_tokens for completion in flat)
        generated = sum(len(completion.token_ids or []) for completion in flat)
        baseline = baseline or episodes
        rows.append(
            {
                "setting": label,
                "generated_tokens": generated,
                "prompt_tokens": prompt_tokens,
                "prefilled_tokens": prompt_tokens - (_reused_tokens(policy) - reused_before),
                "wall_s": round(wall, 3),
                "tokens_per_s": round(generated / wall, 2),
                "speedup": round(rows[0]["wall_s"] / wall, 2) if rows else 1.0,
                "greedy_match": _agreement(episodes, baseline),
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


async def _turn_format(system: str) -> TurnFormat:
    """The turn format of a prompt: the meta-tools and the tools its system prompt lists."""
    toolspace = Toolspace(ToolEnv.builtin().sources)
    await toolspace.refresh()
    listed = [spec for spec in toolspace.tools.values() if f'"name": "{spec.name}"' in system]
    tools = [*META_TOOL_SPECS, *sorted(listed, key=lambda spec: spec.name)]
    return TurnFormat(
        tools=tuple(ToolSchema(name=t.name, parameters=t.input_schema) for t in tools)
    )


async def _setup_seconds(policy: Policy, turn_format: TurnFormat) -> tuple[float, float]:
    """Seconds to set up one turn's constraint: a toolset's first turn, then a cached one."""
    start = policy.start_constraint  # type: ignore[attr-defined]
    await asyncio.to_thread(start, TurnFormat())  # builds the tokenizer's byte trie once
    times = []
    for _ in range(2):
        started = time.perf_counter()
        await asyncio.to_thread(start, turn_format)
        times.append(time.perf_counter() - started)
    return times[0], times[1]


async def run_constrained(
    requests: int,
    max_tokens: int,
    target: int,
    placement: Placement | None = None,
    backends: list[str] | None = None,
) -> dict:
    """Free versus constrained greedy decoding of the same prompts, alternating, per backend."""
    placement = placement or Placement()
    prompts, prompt_lengths = await _reference_prompts(requests, target, placement)
    turn_format = await _turn_format(prompts[0][0].content)
    free = SamplingParams(max_tokens=max_tokens, temperature=0.0)
    constrained = free.model_copy(update={"turn_format": turn_format})
    rows: list[dict[str, Any]] = []
    for backend in backends or ["onnx-fp32"]:
        policy = placement.policy(backend, constrained=True)
        await asyncio.to_thread(_load, policy)
        cold, warm = await _setup_seconds(policy, turn_format)
        await policy.complete(prompts[0], sampling=constrained.model_copy(update={"max_tokens": 2}))
        totals = {name: {"tokens": 0, "wall": 0.0, "valid": 0} for name in ("free", "constrained")}
        for prompt in prompts:
            # One token first, so both measured turns reuse the whole prompt's keys and values:
            # the ratio compares decoding, not prefill.
            await policy.complete(prompt, sampling=free.model_copy(update={"max_tokens": 1}))
            for name, sampling in (("free", free), ("constrained", constrained)):
                started = time.perf_counter()
                completion = await policy.complete(prompt, sampling=sampling)
                total = totals[name]
                total["wall"] += time.perf_counter() - started
                total["tokens"] += len(completion.token_ids or [])
                total["valid"] += parse_turn(completion.text, strict=True).valid
        speeds = {name: total["tokens"] / total["wall"] for name, total in totals.items()}
        rows.append(
            {
                "backend": backend,
                "free_tokens": totals["free"]["tokens"],
                "free_tokens_per_s": round(speeds["free"], 2),
                "constrained_tokens": totals["constrained"]["tokens"],
                "constrained_tokens_per_s": round(speeds["constrained"], 2),
                "ratio": round(speeds["constrained"] / speeds["free"], 3),
                "setup_first_s": round(cold, 4),
                "setup_cached_s": round(warm, 5),
                "free_valid_turns": totals["free"]["valid"],
                "constrained_valid_turns": totals["constrained"]["valid"],
            }
        )
        await policy.aclose()
    return _report(
        placement,
        requests=requests,
        max_tokens=max_tokens,
        prompt_tokens={"min": min(prompt_lengths), "max": max(prompt_lengths)},
        grammar_tools=len(turn_format.tools),
        results=rows,
    )


async def run_episodes(
    count: int,
    max_tokens: int,
    placement: Placement | None = None,
    backends: list[str] | None = None,
) -> dict:
    """``make run``'s workload on each backend: the first ``count`` built-in tasks, interleaved.

    Each task runs on every backend in turn (so load changes hit all of them alike), with the
    agent, tools and greedy settings of ``paraagent run --builtin-tasks``. Rows report seconds
    per episode, the model's share, generated tokens/s over the model's seconds, success, whether
    every turn's tokens equal the first row's, and the share of draft tokens accepted.
    """
    placement = placement or Placement()
    variants = backends or [f"onnx-fp32{NO_DRAFT}", f"onnx-fp32{COLD}", "onnx-fp32"]
    policies = {backend: placement.policy(backend) for backend in variants}
    for policy in policies.values():
        await asyncio.to_thread(_load, policy)
    env = ToolEnv.builtin()
    search = default_tool_search(index_scope(None, with_builtin=True))
    config = AgentConfig(sampling=SamplingParams(max_tokens=max_tokens, temperature=0.0, seed=0))
    episodes: dict[str, list[Episode]] = {backend: [] for backend in variants}
    tasks = {task.id: task for task in builtin_tasks()[:count]}
    for task in tasks.values():
        for backend, policy in policies.items():
            toolspace = Toolspace(env.for_task(task).sources, search=search)
            await toolspace.refresh()
            agent = Agent(policy, toolspace, config)
            episodes[backend].append(await agent.run(task.query, task_id=task.id))
    reference = episodes[variants[0]]
    rows = []
    for backend, policy in policies.items():
        runs = episodes[backend]
        model_s = sum(turn.model_latency_s or 0.0 for episode in runs for turn in episode.turns)
        tokens = sum(len(turn.token_ids or []) for episode in runs for turn in episode.turns)
        solved = sum(
            episode.answer is not None
            and check_answer(tasks[episode.task_id or ""], episode.answer).success
            for episode in runs
        )
        drafts = getattr(policy, "draft_stats", None)
        rows.append(
            {
                "backend": backend,
                "episodes": len(runs),
                "seconds_per_episode": round(sum(e.duration_s for e in runs) / len(runs), 2),
                "model_seconds_per_episode": round(model_s / len(runs), 2),
                "tokens_per_episode": round(tokens / len(runs), 1),
                "tokens_per_s": round(tokens / model_s, 2),
                "success": solved,
                "same_turns": sum(
                    _turn_tokens(a) == _turn_tokens(b) for a, b in zip(runs, reference, strict=True)
                ),
                "draft_acceptance": round(drafts.acceptance, 3) if drafts else None,
            }
        )
        await policy.aclose()
    return _report(placement, episodes=count, max_tokens=max_tokens, results=rows)


def _turn_tokens(episode: Episode) -> list[list[int] | None]:
    return [turn.token_ids for turn in episode.turns]


def episodes_table(report: dict) -> Table:
    """The ``make run`` workload comparison as a rich table."""
    return _table(
        f"{report['model']}, the first {report['episodes']} built-in tasks (paraact, greedy, "
        f"{report['max_tokens']} tokens/turn), backends interleaved per task",
        ("backend", "s/ep", "model s/ep", "tok/ep", "tok/s", "solved", "same", "drafts ok"),
        [
            [
                row["backend"],
                f"{row['seconds_per_episode']:.2f}",
                f"{row['model_seconds_per_episode']:.2f}",
                f"{row['tokens_per_episode']:.1f}",
                f"{row['tokens_per_s']:.1f}",
                f"{row['success']}/{row['episodes']}",
                f"{row['same_turns']}/{row['episodes']}",
                "—" if row["draft_acceptance"] is None else f"{row['draft_acceptance']:.0%}",
            ]
            for row in report["results"]
        ],
    )


def constrained_table(report: dict) -> Table:
    """The free versus constrained comparison as a rich table."""
    return _table(
        f"{report['model']}, {report['requests']} greedy requests one at a time, free and "
        f"constrained in turn ({report['grammar_tools']} tools in the grammar), "
        f"{report['max_tokens']} new tokens at most",
        (
            "backend",
            "free tok/s",
            "constrained tok/s",
            "ratio",
            "setup first s",
            "setup cached s",
            "valid free",
            "valid constrained",
        ),
        [
            [
                row["backend"],
                f"{row['free_tokens_per_s']:.1f}",
                f"{row['constrained_tokens_per_s']:.1f}",
                f"{row['ratio']:.3f}",
                f"{row['setup_first_s']:.3f}",
                f"{row['setup_cached_s']:.5f}",
                f"{row['free_valid_turns']}/{report['requests']}",
                f"{row['constrained_valid_turns']}/{report['requests']}",
            ]
            for row in report["results"]
        ],
    )


def _report(placement: Placement, **fields: Any) -> dict[str, Any]:
    """A report: the model and machine, then ``fields``."""
    import torch

    return {
        "model": "ParaAgent-135M" if placement.model == "paraagent" else "SmolLM2-135M-Instruct",
        "device": placement.device,
        "dtype": placement.dtype,
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        **fields,
    }


def _table(title: str, headers: tuple[str, ...], rows: list[list[str]]) -> Table:
    result = Table(title=title)
    result.add_column(headers[0], no_wrap=True)
    for header in headers[1:]:
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


_COMMON_HEADERS = ("tokens", "wall s", "tokens/s", "speed-up", "greedy = row 1")


def multiturn_table(report: dict) -> Table:
    """The prefix-reuse comparison as a rich table."""
    return _table(
        f"{report['model']}, {report['requests']} concurrent {report['turns']}-turn greedy "
        f"episodes, {report['max_tokens']} new tokens/turn (transformers: max batch "
        f"{report['max_batch_size']})",
        ("setting", "prompt tokens", "prefilled", *_COMMON_HEADERS),
        [
            [row["setting"], str(row["prompt_tokens"]), str(row["prefilled_tokens"])]
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
        (
            "backend",
            "max batch",
            "calls",
            "first token cold s",
            "warm s",
            *_COMMON_HEADERS,
        ),
        [
            [
                row["backend"],
                str(row["max_batch_size"]),
                str(row["generate_calls"]),
                f"{row['first_token_cold_s']:.2f}",
                f"{row['first_token_warm_s']:.2f}",
            ]
            + _common_cells(row)
            for row in report["results"]
        ],
    )


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=8, help="concurrent complete() calls")
    parser.add_argument(
        "--max-tokens",
        type=int,
        help=f"new tokens per request (default {REQUEST_TOKENS}; --episodes: "
        f"{DEFAULT_TURN_TOKENS}, as run)",
    )
    parser.add_argument(
        "--batch-sizes", default="1,4,8", help="comma-separated max_batch_size values"
    )
    parser.add_argument("--prompt-tokens", type=int, default=700, help="approximate prompt size")
    parser.add_argument(
        "--turns", type=int, default=1, help="> 1: compare prefix reuse over multi-turn episodes"
    )
    parser.add_argument(
        "--backends",
        help="comma-separated: transformers, onnx-fp32, onnx-int8, onnx-int4, each ONNX one also "
        f"as onnx-<precision>{NO_DRAFT} (no speculative drafts) or onnx-<precision>{COLD} "
        f"(drafts from an empty memory) [default: transformers, onnx-fp32{NO_DRAFT}, "
        f"onnx-fp32{COLD}, onnx-int4; --episodes: onnx-fp32{NO_DRAFT}, onnx-fp32{COLD}, "
        "onnx-fp32]",
    )
    parser.add_argument(
        "--model", choices=("paraagent", "base"), default="paraagent", help="adapter or not"
    )
    parser.add_argument("--device", default="cpu", help="torch device of the model (cpu, cuda)")
    parser.add_argument("--dtype", default="float32", help="weights dtype (float32, bfloat16)")
    parser.add_argument(
        "--constrained", action="store_true", help="compare free and constrained decoding"
    )
    parser.add_argument(
        "--episodes",
        type=int,
        default=0,
        help="> 0: run make run's workload (the first N built-in tasks) on each backend instead",
    )
    parser.add_argument("--json", help="also write the JSON report to this file")
    args = parser.parse_args()
    placement = Placement(args.device, args.dtype, args.model)
    max_tokens = args.max_tokens or REQUEST_TOKENS
    batch_sizes = [int(value) for value in args.batch_sizes.split(",") if value.strip()]
    backends = [value.strip() for value in (args.backends or "").split(",") if value.strip()]
    if not backends and args.episodes <= 0:
        backends = ["transformers", f"onnx-fp32{NO_DRAFT}", f"onnx-fp32{COLD}", "onnx-int4"]
    for backend in backends:
        if not known_backend(backend):
            parser.error(f"unknown backend {backend!r}")
    if args.episodes > 0:
        turn_tokens = args.max_tokens or DEFAULT_TURN_TOKENS
        report = asyncio.run(run_episodes(args.episodes, turn_tokens, placement, backends))
        render = episodes_table
    elif args.constrained:
        report = asyncio.run(
            run_constrained(args.requests, max_tokens, args.prompt_tokens, placement, backends)
        )
        render = constrained_table
    elif args.turns > 1:
        report = asyncio.run(
            run_multiturn(
                args.requests,
                max_tokens,
                max(batch_sizes),
                args.prompt_tokens,
                args.turns,
                placement,
                backends,
            )
        )
        render = multiturn_table
    else:
        report = asyncio.run(
            run(args.requests, max_tokens, batch_sizes, args.prompt_tokens, placement, backends)
        )
        render = table
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    Console(width=max(Console().width, 140)).print(render(report))


if __name__ == "__main__":
    main()

"""Tool-retrieval benchmark: quality (single and multi-tool), build cost and latency at 50k tools.

Run ``python -m benchmarks.retrieval`` (``--sizes 2000`` for a fast pass; ``--quality-only`` or
``--skip-quality`` for one half). **Quality**: BM25, dense, the hybrid before issue #27
(min-max fusion), the hybrid and the hybrid with coverage on the query sets of
:mod:`paraagent_runtime.retrieval.querysets` (settings tuned on their dev part; the test part is
reported), NDCG@5 and completeness@5 for single- and multi-tool queries with bootstrap and paired
intervals; ``--doc docs/results/retrieval_v2`` writes the headline as ``.json`` and ``.md``.

The latency pool (``--pool gold``, the default) is StableToolBench's 2,220 endpoints, whose
queries are timed, topped up with ToolEnv catalog tools as distractors (its copies of
StableToolBench endpoints dropped, so no gold tool is in the pool twice); ``--pool local`` reads
real tool documentation from ``../shared/data`` instead (StableToolBench, TOUCAN, the OpenAPI
directory, Seal-Tools, then AWS operations from ``botocore``), ``--pool toolenv`` the ToolEnv
catalog alone. Embeddings are cached in ``--cache`` (under the paraagent cache) by the index's own
on-disk store, so only the first run pays for embedding the pool (``--fill-cache-only`` does just
that, resumably); the embedding rate is always measured on a fresh sample.

Measured:

* **build** — embeddings/s (fresh sample), index build time from cached embeddings (FAISS +
  BM25), estimated full build time, resident-memory growth;
* **latency** — p50/p99 of one ``search`` call, query embedding included, per mode (``coverage``
  includes the decomposition and the embedding of every need), at the largest size, with exact
  (flat) and HNSW FAISS (target p50 <= 15 ms at 50k on 2 cores), on StableToolBench queries,
  and on those that split into several needs and those that do not, with the ratio of the
  coverage search's p50 to the hybrid's, and the hybrid and coverage searches again with
  queries embedded by the float32 graph instead of the default int8 one (same loop);
* **HNSW recall@10** against exact search for several ``efSearch`` values (target >= 0.99);
* **incremental update** — swapping 100 tools (re-embeds only those) versus a FAISS rebuild.

Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from paraagent_runtime import ToolSpec
from paraagent_runtime.documents import tool_document
from paraagent_runtime.retrieval import (
    EmbeddingStore,
    HybridToolSearch,
    RetrievalConfig,
    SentenceEncoder,
)
from paraagent_runtime.retrieval.config import default_index_dir
from paraagent_runtime.retrieval.decompose import decompose
from paraagent_runtime.retrieval.dense import DenseIndex
from paraagent_runtime.retrieval.documents import doc_hash
from paraagent_runtime.retrieval.evaluate import (
    HEADLINE,
    PAIRS,
    drop_duplicates,
    evaluate_retrieval,
    percent_cell,
)
from paraagent_runtime.retrieval.querysets import load_query_sets
from paraagent_runtime.retrieval.stabletoolbench import load_stabletoolbench

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
_SLUG = re.compile(r"[^A-Za-z0-9]+")
_CHUNK = 2500


def _slug(text: str) -> str:
    return _SLUG.sub("_", str(text)).strip("_").lower()[:60] or "x"


def _spec(provider: str, name: str, description: str, properties: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        id=f"{_slug(provider)}/{_slug(name)}",
        description=description or "",
        input_schema={"type": "object", "properties": properties},
        provider=provider,
    )


def _toucan(root: Path) -> list[ToolSpec]:
    tools = []
    for path in sorted((root / "toucan" / "mcp_servers").glob("*.json")):
        metadata = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        server = metadata.get("server_name") or path.stem
        live = (metadata.get("remote_server_response") or {}).get("tools") or []
        crawled = (metadata.get("server_info_crawled") or {}).get("tools") or []
        for tool in live or crawled:
            schema = tool.get("input_schema") or {}
            properties = schema.get("properties") if isinstance(schema, dict) else None
            if not isinstance(properties, dict):
                properties = {
                    p["name"]: {"type": "string"}
                    for p in tool.get("parameters") or []
                    if isinstance(p, dict) and p.get("name") and p["name"] != tool.get("name")
                }
            tools.append(
                _spec(server, tool.get("name", "tool"), tool.get("description", ""), properties)
            )
    return tools


def _openapi(root: Path) -> list[ToolSpec]:
    tools = []
    for path in sorted((root / "openapi-directory-lite" / "specs").rglob("*.json")):
        spec = json.loads(path.read_text(encoding="utf-8"))
        provider = spec.get("info", {}).get("title") or path.parent.name
        for route, item in (spec.get("paths") or {}).items():
            for method, operation in item.items():
                if method not in {"get", "put", "post", "delete", "patch"} or not isinstance(
                    operation, dict
                ):
                    continue
                properties = {
                    p["name"]: {
                        "type": p.get("type", "object"),
                        "description": p.get("description", ""),
                    }
                    for p in operation.get("parameters", [])
                    if isinstance(p, dict) and "name" in p
                }
                description = " ".join(
                    str(operation.get(key, "")) for key in ("summary", "description")
                )[:600]
                name = operation.get("operationId") or f"{method}_{route}"
                tools.append(_spec(provider, name, description, properties))
    return tools


def _seal(root: Path) -> list[ToolSpec]:
    lines = (root / "seal-tools" / "Seal-Tools_Dataset" / "tool.jsonl").read_text(encoding="utf-8")
    tools = []
    for line in lines.splitlines():
        if line.strip():
            tool = json.loads(line)
            properties = {
                key: {"type": "string", "description": value.get("description", "")}
                for key, value in (tool.get("parameters") or {}).items()
                if isinstance(value, dict)
            }
            tools.append(
                _spec(
                    tool.get("field", "seal"),
                    tool["api_name"],
                    tool.get("api_description", ""),
                    properties,
                )
            )
    return tools


def _botocore(limit: int) -> list[ToolSpec]:
    try:
        import botocore.session
    except ImportError:
        return []
    session = botocore.session.get_session()
    loader = session.get_component("data_loader")
    tools: list[ToolSpec] = []
    for service in loader.list_available_services("service-2"):
        model = loader.load_service_model(service, "service-2")
        shapes = model.get("shapes", {})
        for name, operation in model.get("operations", {}).items():
            documentation = re.sub(r"<[^>]+>", " ", operation.get("documentation", ""))[:600]
            members = shapes.get(operation.get("input", {}).get("shape", ""), {}).get("members", {})
            properties = {key: {"type": "string"} for key in members}
            tools.append(_spec(f"aws_{service}", name, documentation, properties))
            if len(tools) >= limit:
                return tools
    return tools


def local_pool(size: int, root: Path = DATA) -> list[ToolSpec]:
    """Real tool specs from the shared data folder (plus botocore), unique ids, ``size`` at most."""
    pool: dict[str, ToolSpec] = {}
    readers = (
        lambda: load_stabletoolbench(root / "stabletoolbench").tools,
        lambda: _toucan(root),
        lambda: _openapi(root),
        lambda: _seal(root),
        lambda: _botocore(size),
    )
    for reader in readers:
        for tool in reader():
            pool.setdefault(tool.id, tool)
        if len(pool) >= size:
            break
    return list(pool.values())[:size]


def toolenv_pool(size: int | None) -> list[ToolSpec]:
    """The ToolEnv catalog's tools (the benchmark may import mcp_servers; the runtime may not)."""
    from mcp_servers.toolenv.catalog import load_catalog

    return [record.to_spec() for record in load_catalog().records][:size]


def gold_pool(size: int) -> list[ToolSpec]:
    """StableToolBench's pool topped up to ``size`` with ToolEnv catalog tools as distractors.

    The latency queries are StableToolBench's, so their gold tools are in the pool once: the
    catalog's copies of pool tools (its ``rapidapi_*`` endpoints) are dropped by
    :func:`~paraagent_runtime.retrieval.evaluate.drop_duplicates`, and the rest are taken in a
    fixed shuffled order so every ToolEnv source is represented at any size.
    """
    gold = load_stabletoolbench(DATA / "stabletoolbench").tools
    if size <= len(gold):
        return gold[:size]
    distractors, _ = drop_duplicates(gold, toolenv_pool(None))
    random.Random(0).shuffle(distractors)
    return [*gold, *distractors][:size]


POOLS = {"gold": gold_pool, "local": local_pool, "toolenv": toolenv_pool}
"""Latency pools: StableToolBench + ToolEnv distractors (default), shared-data readers, ToolEnv."""


def load_pool(name: str, size: int) -> list[ToolSpec]:
    """The first ``size`` tools of the pool called ``name`` (a key of :data:`POOLS`)."""
    return POOLS[name](size)


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "mean_ms": 1000 * statistics.fmean(ordered),
    }


Search = Callable[[str], Awaitable[object]]


def _searcher(index: HybridToolSearch, mode: str) -> Search:
    """One ``search_tools``-sized search of ``index`` in ``mode``."""
    return lambda query: index.search(query, top_k=10, mode=mode)


async def _latency(queries: list[str], searches: dict[str, Search]) -> dict[str, dict[str, float]]:
    """p50/p99 of each named search, interleaved query by query.

    On a shared machine the load drifts; timing every search on a query before the next query
    makes their ratios side by side rather than minutes apart.
    """
    names = list(searches)
    for name in names:
        await searches[name](queries[0])
    samples: dict[str, list[float]] = {name: [] for name in names}
    for position, query in enumerate(queries):
        # Rotate the order so no search always runs first (warm caches) or last.
        for name in names[position % len(names) :] + names[: position % len(names)]:
            started = time.perf_counter()
            await searches[name](query)
            samples[name].append(time.perf_counter() - started)
    return {name: _percentiles(values) for name, values in samples.items()}


def _recall(exact: np.ndarray, approx: np.ndarray) -> float:
    hits = [len(set(e) & set(a)) / len(e) for e, a in zip(exact, approx, strict=True)]
    return float(np.mean(hits))


def fill_cache(pool: list[ToolSpec], cache: Path, encoder: SentenceEncoder) -> None:
    """Embed ``pool`` into the on-disk store of ``cache``, resuming where an earlier run stopped.

    Only documents the store lacks are embedded, in saved chunks, so an interrupted run loses
    at most one chunk; no index is built on the way (the store keeps rows by document hash, and
    the index reuses them whatever catalog they were saved under).
    """
    store = EmbeddingStore(cache, encoder.name)
    stored = store.load()
    known = set(stored.doc_hashes) if stored is not None else set()
    documents = {doc_hash(text): text for text in map(tool_document, pool)}
    missing = [digest for digest in documents if digest not in known]
    log = logging.getLogger(__name__)
    for start in range(0, len(missing), _CHUNK):
        chunk = missing[start : start + _CHUNK]
        vectors = encoder.encode([documents[digest] for digest in chunk])
        store.save(f"fill-{start}", chunk, vectors)
        log.info("embedding cache: %d of %d new documents", start + len(chunk), len(missing))


async def run(
    sizes: list[int], cache: Path, pool_name: str, n_queries: int, *, compare_torch: bool = False
) -> dict[str, Any]:
    """Run every measurement and return the results as one JSON-able dict."""
    largest = max(sizes)
    pool = load_pool(pool_name, largest)
    queries = [q.text for q in load_stabletoolbench(DATA / "stabletoolbench").queries][:n_queries]
    # What a coverage search costs depends on whether the request splits into needs. Nearly
    # every StableToolBench query does, so the single-need set is each query's first need: a
    # short search_tools call.
    needs = [decompose(query) for query in queries]
    by_needs = {
        "single-need": [found[0].text for found in needs if found],
        "multi-need": [q for q, found in zip(queries, needs, strict=True) if len(found) > 1],
    }
    encoder = SentenceEncoder()
    sample = [tool_document(tool) for tool in pool[-128:]]
    started = time.perf_counter()
    encoder.encode(sample)
    rate = len(sample) / (time.perf_counter() - started)
    results: dict[str, Any] = {
        "pool": pool_name,
        "pool_size": len(pool),
        "cpus": os.cpu_count(),
        "torch_threads": __import__("torch").get_num_threads(),
        "load_avg_start": os.getloadavg(),
        "embeddings_per_s": rate,
        "encoder_backend": encoder.backend,
        "sizes": {},
    }
    config = RetrievalConfig(index_dir=cache)
    fill_cache(pool, cache, encoder)
    index = HybridToolSearch(config, encoder=encoder)
    for size in sorted(sizes):
        before = _rss_mb()
        started = time.perf_counter()
        await index.update(pool[:size])
        build_s = time.perf_counter() - started
        stats = index.last_update
        assert stats is not None
        results["sizes"][size] = {
            "tools": stats.tools,
            "index_kind": stats.index_kind,
            "embedded_now": stats.embedded,
            "update_s": build_s,
            "index_build_s_cached": build_s if stats.embedded == 0 else None,
            "estimated_full_build_s": size / rate + (build_s if stats.embedded == 0 else 0.0),
            "rss_growth_mb": _rss_mb() - before,
            "vectors_mb": size * encoder.dimension * 4 / 2**20,
        }
    snapshot = index._snapshot
    assert snapshot is not None
    vectors = snapshot.vectors
    query_vectors = encoder.encode_queries(queries)

    flat = DenseIndex(vectors, exact_threshold=len(vectors) + 1)
    _, exact = flat.search(query_vectors, 10)
    started = time.perf_counter()
    hnsw = DenseIndex(
        vectors,
        exact_threshold=0,
        hnsw_m=config.hnsw_m,
        ef_construction=config.hnsw_ef_construction,
    )
    results["hnsw_build_s"] = time.perf_counter() - started
    started = time.perf_counter()
    DenseIndex(vectors, exact_threshold=len(vectors) + 1)
    results["flat_build_s"] = time.perf_counter() - started
    sweep = {}
    for ef in (16, 32, 64, 128, 256, 512):
        hnsw.ef_search = ef
        started = time.perf_counter()
        _, approx = hnsw.search(query_vectors, 10)
        elapsed = (time.perf_counter() - started) / len(queries)
        started = time.perf_counter()
        _, deep = hnsw.search(query_vectors, config.candidates)
        deep_elapsed = (time.perf_counter() - started) / len(queries)
        sweep[ef] = {
            "recall@10": _recall(exact, approx),
            "faiss_ms_per_query": 1000 * elapsed,
            # What search_tools asks for: config.candidates rows (FAISS widens the beam to it).
            "recall@10_at_service_depth": _recall(exact, deep[:, :10]),
            "faiss_ms_per_query_at_service_depth": 1000 * deep_elapsed,
        }
    # The smallest beam reaching the target at depth 10, for reference; the latency runs below
    # use the configured beam, as search_tools does.
    chosen_ef = next((ef for ef, row in sweep.items() if row["recall@10"] >= 0.99), max(sweep))
    results["hnsw_ef_search_chosen"] = chosen_ef
    results["hnsw_ef_search_configured"] = config.hnsw_ef_search
    # search_tools asks FAISS for config.candidates rows, which widens the beam to that depth.
    hnsw.ef_search = config.hnsw_ef_search
    _, service = hnsw.search(query_vectors, config.candidates)
    results["hnsw_recall@10_at_service_depth"] = _recall(exact, service[:, :10])
    started = time.perf_counter()
    flat.search(query_vectors, 10)
    results["flat_faiss_ms_per_query"] = 1000 * (time.perf_counter() - started) / len(queries)
    results["hnsw_sweep"] = sweep

    latency: dict[str, Any] = {}
    # The same index with queries embedded by the float32 graph (documents are float32 either
    # way), timed in the same loop: what the int8 query graph buys, as a ratio.
    float32 = SentenceEncoder(query_precision="float32")
    for kind, threshold in (("hnsw", 0), ("flat", largest + 1)):
        variant_config = replace(config, exact_threshold=threshold)
        variant = HybridToolSearch(variant_config, encoder=encoder)
        variant._snapshot = variant._assemble(
            snapshot.ids, snapshot.documents, snapshot.hashes, [""] * len(snapshot.ids), vectors
        )
        twin = HybridToolSearch(variant_config, encoder=float32)
        twin._snapshot = variant._snapshot
        searches = {
            **{mode: _searcher(variant, mode) for mode in ("bm25", "dense", "hybrid", "coverage")},
            **{f"{mode} float32-queries": _searcher(twin, mode) for mode in ("hybrid", "coverage")},
        }
        timed = await _latency(queries, searches)
        latency.update({f"{kind}/{mode}": row for mode, row in timed.items()})
        for group, members in by_needs.items():
            pair = {mode: searches[mode] for mode in ("hybrid", "coverage")}
            timed = await _latency(members, pair)
            latency.update({f"{kind}/{mode} {group}": row for mode, row in timed.items()})
    latency["query_embedding_only"] = _embedding_latency(encoder, queries)
    latency["query_embedding_only_float32"] = _embedding_latency(float32, queries)
    if compare_torch and encoder.backend != "torch":
        # The same queries through PyTorch, side by side: the backend's speed-up as a ratio.
        latency["query_embedding_only_torch"] = _embedding_latency(
            SentenceEncoder(backend="torch"), queries
        )
    results["queries"] = {"all": len(queries), **{k: len(v) for k, v in by_needs.items()}}
    results["coverage_over_hybrid_p50"] = {
        f"{kind}{suffix}": latency[f"{kind}/coverage{suffix}"]["p50_ms"]
        / latency[f"{kind}/hybrid{suffix}"]["p50_ms"]
        for kind in ("flat", "hnsw")
        for suffix in ("", *(f" {group}" for group in by_needs))
    }
    results["int8_over_float32_queries_p50"] = {
        f"{kind}/{mode}": latency[f"{kind}/{mode}"]["p50_ms"]
        / latency[f"{kind}/{mode} float32-queries"]["p50_ms"]
        for kind in ("flat", "hnsw")
        for mode in ("hybrid", "coverage")
    }
    results["latency_at"] = largest
    results["latency"] = latency

    changed = [
        ToolSpec(
            id=f"bench_new/tool_{i}", description=f"benchmark tool {i}: {queries[i % len(queries)]}"
        )
        for i in range(100)
    ]
    # A memory-only twin, so the swap does not overwrite the embedding cache with a smaller pool.
    scratch = HybridToolSearch(replace(config, index_dir=None), encoder=encoder)
    scratch._snapshot = index._snapshot
    started = time.perf_counter()
    await scratch.update(pool[100:largest] + changed)
    results["incremental_update"] = {
        "swapped_tools": 100,
        "seconds": time.perf_counter() - started,
        "embedded": scratch.last_update.embedded if scratch.last_update else None,
    }
    results["load_avg_end"] = os.getloadavg()
    return results


def lexical_latency(size: int, queries: list[str]) -> dict[str, Any]:
    """BM25 cost at ``size`` tools (no embeddings needed): per text and per coverage query.

    A coverage search scores the whole query and each of its needs, so its BM25 share grows with
    the pool; this measures that share on the real ``size``-tool pool.
    """
    from paraagent_runtime.retrieval.lexical import LexicalIndex

    pool = local_pool(size)
    started = time.perf_counter()
    lexical = LexicalIndex([tool_document(tool) for tool in pool])
    build_s = time.perf_counter() - started
    per_text: list[float] = []
    per_query: list[float] = []
    texts_per_query: list[int] = []
    for query in queries:
        needs = decompose(query)
        texts = [query, *(need.text for need in needs)] if len(needs) > 1 else [query]
        texts_per_query.append(len(texts))
        total = 0.0
        for text in texts:
            started = time.perf_counter()
            lexical.scores(text)
            elapsed = time.perf_counter() - started
            per_text.append(elapsed)
            total += elapsed
        per_query.append(total)
    return {
        "tools": len(pool),
        "build_s": build_s,
        "bm25_per_text": _percentiles(per_text),
        "bm25_per_coverage_query": _percentiles(per_query),
        "texts_per_query_mean": statistics.fmean(texts_per_query),
    }


TABLES_MARKER = "## Tables (regenerated by the benchmark)"
"""Where the generated part of ``<doc>.md`` starts; the text above it is kept."""
QUALITY_SYSTEMS = ("bm25", "dense", "hybrid_minmax", "hybrid", "coverage")
"""The systems of the quality table (``hybrid_minmax`` is the hybrid before issue #27)."""


async def quality(cache: Path, encoder: SentenceEncoder) -> dict[str, Any]:
    """Evaluate every system on the query sets; keep the headline and the test rankings."""
    benches = load_query_sets(DATA, parts=("dev", "test"))

    def search_for(name: str) -> HybridToolSearch:
        return HybridToolSearch(
            RetrievalConfig(index_dir=cache / f"quality-{name}"), encoder=encoder
        )

    def progress(name: str) -> Any:
        log = logging.getLogger(__name__)
        return lambda done, total: log.info("embedding %s: %d/%d", name, done, total)

    report = await evaluate_retrieval(
        benches, search_for=search_for, on_progress=progress, tune_on_dev=False
    )
    keep = QUALITY_SYSTEMS
    return {
        "pools": report.pools,
        "queries": report.queries,
        "model": report.model,
        "settings": report.settings,
        "scores": {
            part: {
                name: {
                    kind: {system: values[system] for system in keep}
                    for kind, values in kinds.items()
                }
                for name, kinds in sets.items()
            }
            for part, sets in report.scores.items()
        },
        "intervals": report.intervals,
        "paired": report.paired,
        "test_rankings": [
            {**row, "top": {system: row["top"][system][:5] for system in QUALITY_SYSTEMS}}
            for row in report.rankings
            if row["part"] == "test"
        ],
    }


def _quality_table(results: dict[str, Any], part: str = "test") -> Table:
    table = Table(title=f"tool retrieval quality ({part} part), % [95% interval]")
    for column in ("set", "kind", "n", *QUALITY_SYSTEMS):
        table.add_column(column, justify="left" if column in ("set", "kind") else "right")
    for name, kinds in results["intervals"][part].items():
        for kind, systems in kinds.items():
            for metric in HEADLINE:
                cells = [percent_cell(systems[system][metric]) for system in QUALITY_SYSTEMS]
                table.add_row(name, f"{kind} {metric}", str(systems["bm25"][metric]["n"]), *cells)
    return table


def write_doc(results: dict[str, Any], stem: Path) -> None:
    """Write ``<stem>.json`` (everything) and ``<stem>.md`` (the headline tables).

    Sections already in ``<stem>.json`` that ``results`` lacks are kept, so the quality and
    the latency halves can be run separately.
    """
    stem.parent.mkdir(parents=True, exist_ok=True)
    json_path = stem.with_suffix(".json")
    if json_path.exists():
        results = {**json.loads(json_path.read_text("utf-8")), **results}
    json_path.write_text(json.dumps(results, indent=1, default=str), "utf-8")
    md_path = stem.with_suffix(".md")
    written = md_path.read_text("utf-8") if md_path.exists() else ""
    # The hand-written account above the marker stays; the tables below it are regenerated.
    preamble = written.partition(TABLES_MARKER)[0] if TABLES_MARKER in written else ""
    lines = (
        [preamble.rstrip("\n"), "", TABLES_MARKER, ""]
        if preamble
        else ["# Tool retrieval v2 (issue #27): `python -m benchmarks.retrieval`", ""]
    )
    if "quality" in results:
        q = results["quality"]
        lines += [
            f"Pools {q['pools']}; queries {q['queries']} (dev: tuning only; test: reported "
            f"once); model `{q['model']}`; settings {q['settings']['configured']}.",
            "",
            "| set | kind | metric | n | " + " | ".join(QUALITY_SYSTEMS) + " |",
            "|---|---|---|---:|" + "---:|" * len(QUALITY_SYSTEMS),
        ]
        for name, kinds in q["intervals"]["test"].items():
            for kind, systems in kinds.items():
                for metric in HEADLINE:
                    cells = " | ".join(percent_cell(systems[s][metric]) for s in QUALITY_SYSTEMS)
                    n = systems["bm25"][metric]["n"]
                    lines.append(f"| {name} | {kind} | {metric} | {n} | {cells} |")
        lines += [
            "",
            "Paired differences (test part, percentage points, 95% paired bootstrap):",
            "",
        ]
        lines += [
            "| set | kind | comparison | " + " | ".join(HEADLINE) + " |",
            "|---|---|---|---|---|",
        ]
        for name, kinds in q["paired"]["test"].items():
            for kind, pairs in kinds.items():
                for system, baseline in PAIRS:
                    label = f"{system} - {baseline}"
                    cells = " | ".join(percent_cell(pairs[label][m]) for m in HEADLINE)
                    lines.append(f"| {name} | {kind} | {label} | {cells} |")
    if "lexical_latency" in results:
        lex = results["lexical_latency"]
        lines += [
            "",
            f"BM25 alone at {lex['tools']} tools (ms): p50 {lex['bm25_per_text']['p50_ms']:.2f} "
            f"per text, {lex['bm25_per_coverage_query']['p50_ms']:.2f} per coverage query "
            f"({lex['texts_per_query_mean']:.1f} texts per multi-tool query).",
        ]
    if "latency" in results:
        lines += [
            "",
            f"Latency at {results['latency_at']} tools (ms, one query, embedding included):",
            "",
        ]
        lines += ["| mode | p50 | p99 |", "|---|---:|---:|"]
        for mode, row in results["latency"].items():
            lines.append(f"| {mode} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} |")
        if "coverage_over_hybrid_p50" in results:
            ratios = ", ".join(
                f"{name} {ratio:.2f}" for name, ratio in results["coverage_over_hybrid_p50"].items()
            )
            lines += [
                "",
                f"Coverage p50 / hybrid p50, same run: {ratios}. Queries {results['queries']}; "
                f"load average (1/5/15 min) {_load(results['load_avg_start'])} at the start, "
                f"{_load(results['load_avg_end'])} at the end, on {results['cpus']} CPUs.",
            ]
    md_path.write_text("\n".join(lines) + "\n", "utf-8")


def _embedding_latency(encoder: SentenceEncoder, queries: list[str]) -> dict[str, float]:
    encoder.encode_queries(queries[:5])
    seconds = []
    for query in queries:
        started = time.perf_counter()
        encoder.encode_queries([query])
        seconds.append(time.perf_counter() - started)
    return _percentiles(seconds)


def _load(values: Any) -> str:
    return "/".join(f"{value:.1f}" for value in values)


def _table(results: dict[str, Any]) -> Table:
    table = Table(
        title=f"tool retrieval benchmark ({results['pool']} pool, {results['cpus']} CPUs)"
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row(
        f"embeddings/s (fresh sample, {results['encoder_backend']})",
        f"{results['embeddings_per_s']:.0f}",
    )
    for size, row in results["sizes"].items():
        cached = row["index_build_s_cached"]
        table.add_row(f"{size} tools: index kind", row["index_kind"])
        table.add_row(
            f"{size} tools: build from cached embeddings (s)",
            f"{cached:.2f}" if cached is not None else "n/a (embedded now)",
        )
        table.add_row(
            f"{size} tools: estimated full build (s)", f"{row['estimated_full_build_s']:.0f}"
        )
        table.add_row(f"{size} tools: RSS growth (MB)", f"{row['rss_growth_mb']:.0f}")
    table.add_row(
        "HNSW / flat FAISS build (s)",
        f"{results['hnsw_build_s']:.2f} / {results['flat_build_s']:.3f}",
    )
    for ef, row in results["hnsw_sweep"].items():
        table.add_row(
            f"HNSW efSearch={ef}: recall@10 vs exact (FAISS ms/query), at depth 10 | service",
            f"{row['recall@10']:.4f} ({row['faiss_ms_per_query']:.2f}) | "
            f"{row['recall@10_at_service_depth']:.4f} "
            f"({row['faiss_ms_per_query_at_service_depth']:.2f})",
        )
    table.add_row(
        "HNSW efSearch: smallest with recall@10 >= 0.99 at depth 10 / configured (timed)",
        f"{results['hnsw_ef_search_chosen']} / {results['hnsw_ef_search_configured']}",
    )
    table.add_row(
        "HNSW recall@10 at search_tools depth", f"{results['hnsw_recall@10_at_service_depth']:.4f}"
    )
    for name, row in results["latency"].items():
        if isinstance(row, dict):
            table.add_row(
                f"latency {name} @ {results['latency_at']} p50 / p99 (ms)",
                f"{row['p50_ms']:.1f} / {row['p99_ms']:.1f}",
            )
    table.add_row(
        "load average (1/5/15 min) start -> end",
        f"{_load(results['load_avg_start'])} -> {_load(results['load_avg_end'])}",
    )
    update = results["incremental_update"]
    table.add_row(
        "update swapping 100 tools (s)", f"{update['seconds']:.2f} ({update['embedded']} embedded)"
    )
    return table


def main() -> None:
    """Parse arguments, run the benchmark, print JSON and a table (and write the JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--cache", type=Path, default=default_index_dir() / "bench-retrieval")
    parser.add_argument("--pool", choices=tuple(POOLS), default="gold")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("runs/bench_retrieval/results.json"))
    parser.add_argument("--quality-only", action="store_true", help="Only the quality half.")
    parser.add_argument(
        "--compare-torch",
        action="store_true",
        help="Also time the query embedding through PyTorch (the ONNX backend's speed-up).",
    )
    parser.add_argument(
        "--lexical-size",
        type=int,
        help="Also time BM25 alone at this many tools (per text and per coverage query).",
    )
    parser.add_argument("--skip-quality", action="store_true", help="Only build and latency.")
    parser.add_argument(
        "--doc",
        type=Path,
        help="Also write <doc>.json and <doc>.md (e.g. docs/results/retrieval_v2).",
    )
    parser.add_argument(
        "--fill-cache-only",
        action="store_true",
        help="Only embed the pool into --cache (resumable; run it while the machine is busy, "
        "then measure on a quiet machine).",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.fill_cache_only:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
        pool = load_pool(args.pool, max(args.sizes))
        fill_cache(pool, args.cache, SentenceEncoder())
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    results: dict[str, Any] = {}
    if not args.quality_only:
        results = asyncio.run(
            run(args.sizes, args.cache, args.pool, args.queries, compare_torch=args.compare_torch)
        )
    if args.lexical_size:
        multi = [q.text for b in load_query_sets(DATA, kind="multi") for q in b.queries]
        results["lexical_latency"] = lexical_latency(args.lexical_size, multi[: args.queries])
    if not args.skip_quality:
        results["quality"] = asyncio.run(quality(args.cache, SentenceEncoder()))
    text = json.dumps(results, indent=1, default=str)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    console = Console()
    if "latency" in results:
        console.print(_table(results))
    if "quality" in results:
        console.print(_quality_table(results["quality"]))
    if args.doc is not None:
        write_doc(results, args.doc)


if __name__ == "__main__":
    main()

"""The retrieval evaluation: BM25, dense, hybrid and hybrid with coverage, single and multi-tool.

Queries come from :mod:`.querysets` (StableToolBench and Seal-Tools, each against its own tool
pool, optionally grown with distractors). Every query is searched once per retriever, whole and
per need (:mod:`.decompose`); the systems are then ranked offline from those lists, so tuning a
fusion setting on the *dev* part costs no extra embedding. Scores are reported per part (``dev``,
``test``), per data set and per kind (``single``, ``multi``, ``all``), with bootstrap intervals
and paired intervals between systems (:mod:`paraagent_runtime.intervals`), and the JSON keeps
each query's top ten per system. ``paraagent eval retrieval`` is
:mod:`paraagent_runtime.cli.eval_retrieval`.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..documents import provider_of, split_identifier
from ..errors import ConfigError
from ..intervals import bootstrap_mean, paired_bootstrap_difference
from ..tools import ToolSpec
from .config import RetrievalConfig
from .coverage import cover, need_rankings
from .fusion import FusionMethod, Ranking, fuse
from .metrics import completeness_at_k, ndcg_at_k, recall_at_k
from .querysets import query_part
from .stabletoolbench import RetrievalBench, RetrievalQuery

if TYPE_CHECKING:
    from .index import HybridToolSearch
    from .prefill import Progress

__all__ = [
    "EvalReport",
    "Setting",
    "drop_duplicates",
    "evaluate_retrieval",
    "percent_cell",
    "rank_query",
    "report_table",
    "write_report",
]

logger = logging.getLogger(__name__)

KS = (1, 3, 5, 10)
KINDS = ("single", "multi", "all")
HEADLINE = ("ndcg@5", "completeness@5")
"""The metrics that get intervals and paired comparisons."""
PAIRS = (
    ("coverage", "hybrid_minmax"),
    ("coverage", "bm25"),
    ("coverage", "hybrid"),
    ("hybrid", "hybrid_minmax"),
)
"""``(system, baseline)`` pairs compared with paired bootstrap intervals."""
_TOP = 10
_GRID_METHODS = ((FusionMethod.RRF, 20.0), (FusionMethod.RRF, 60.0), (FusionMethod.ZSCORE, 60.0))
_GRID_WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7)
_GRID_CONTEXT = (0.25, 0.5, 0.75)
_GRID_DIVERSITY = (0.0, 1.0)
_NORMALIZE = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True)
class Setting:
    """The fusion and coverage settings that turn raw lists into a system's ranking."""

    method: FusionMethod
    dense_weight: float
    rrf_k: float
    context: float = 0.0
    diversity: float = 0.0

    @classmethod
    def of(cls, config: RetrievalConfig) -> Setting:
        """The settings a :class:`RetrievalConfig` searches with."""
        return cls(
            FusionMethod(config.fusion),
            config.dense_weight,
            config.rrf_k,
            config.coverage_context,
            config.coverage_diversity,
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {**asdict(self), "method": self.method.value}


MINMAX = Setting(FusionMethod.SCORE, 0.5, 60.0)
"""The hybrid before issue #27: min-max score fusion, equal weights, no coverage."""


@dataclass(frozen=True)
class _Lists:
    """One query's raw rankings: the whole query's and each need's ``(dense, bm25)`` pair."""

    query: RetrievalQuery
    bench: str
    part: str
    needs: list[str]
    whole: tuple[Ranking, Ranking]
    per_need: list[tuple[Ranking, Ranking]]
    context: tuple[Ranking, Ranking]
    """The whole request's pair as a coverage search fuses it into each need's ranking."""


@dataclass
class EvalReport:
    """Scores, intervals, paired differences and per-query rankings of one evaluation.

    ``scores[part][set][kind][system][metric]``; ``intervals`` and ``paired`` are keyed the same
    way down to the system (or ``"system - baseline"``) and hold :class:`Interval` dicts for the
    :data:`HEADLINE` metrics. ``set`` is a data-set name or ``all``.
    """

    pools: dict[str, int]
    queries: dict[str, int]
    model: str
    settings: dict[str, Any]
    distractors_dropped: int = 0
    scores: dict[str, Any] = field(default_factory=dict)
    intervals: dict[str, Any] = field(default_factory=dict)
    paired: dict[str, Any] = field(default_factory=dict)
    rankings: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


def _key(text: str) -> str:
    return _NORMALIZE.sub("", text.lower())


def _identity(spec: ToolSpec, *, prefixed: bool = False) -> tuple[str, str]:
    """``(provider key, tool-name key)``; ``prefixed`` drops a ``<source>_`` provider prefix."""
    provider = provider_of(spec)
    if prefixed and "_" in provider:
        provider = provider.partition("_")[2]
    return _key(" ".join(split_identifier(provider))), _key(spec.tool)[:40]


def _same_provider(pool: str, distractor: str) -> bool:
    # ToolEnv cuts long provider slugs and appends a hash: compare the first 16 characters.
    return pool == distractor or (len(pool) >= 16 and pool[:16] == distractor[:16])


def drop_duplicates(
    pool: Sequence[ToolSpec], distractors: Sequence[ToolSpec]
) -> tuple[list[ToolSpec], int]:
    """The distractors that are not another copy of a pool tool, and how many were dropped.

    A distractor is a copy when its id is a pool id, or when its tool name matches a pool tool's
    and its provider, with any ``<source>_`` prefix removed, is that tool's provider (ToolEnv
    serves StableToolBench's ``TheClique`` endpoints as ``rapidapi_theclique/...`` and
    Seal-Tools' as ``seal_<domain>/...``). Retrieving such a copy would count as a miss.

    Args:
        pool: The evaluated pool (its tools are the gold candidates).
        distractors: Extra tools to add.
    """
    ids = {tool.id for tool in pool}
    providers_by_name: dict[str, set[str]] = {}
    for tool in pool:
        provider, name = _identity(tool)
        providers_by_name.setdefault(name, set()).add(provider)
    kept: list[ToolSpec] = []
    for tool in distractors:
        owners = providers_by_name.get(_identity(tool)[1], set())
        keys = {_identity(tool)[0], _identity(tool, prefixed=True)[0]}
        if tool.id in ids or any(_same_provider(o, k) for o in owners for k in keys):
            continue
        kept.append(tool)
    return kept, len(distractors) - len(kept)


def _kind(query: RetrievalQuery) -> str:
    return "multi" if query.multi_tool else "single"


def rank_query(
    whole: tuple[Ranking, Ranking],
    per_need: Sequence[tuple[Ranking, Ranking]],
    setting: Setting,
    *,
    coverage: bool,
    provider: Mapping[str, str] | None = None,
    k: int = _TOP,
) -> list[str]:
    """One system's top ``k`` for a query from its raw lists (what the index serves, offline).

    Args:
        whole: The whole query's ``(dense, bm25)`` rankings.
        per_need: Each need's pair (ignored unless ``coverage`` and two or more needs).
        setting: Fusion (and coverage) settings.
        coverage: Merge the needs' rankings with coverage.
        provider: Tool id to provider, for the diversity penalty.
        k: How many ids.
    """
    if not coverage or len(per_need) < 2:
        fused = fuse(
            *whole, method=setting.method, dense_weight=setting.dense_weight, rrf_k=setting.rrf_k
        )
        return [tool for tool, _ in fused[:k]]
    rankings = need_rankings(
        per_need,
        whole,
        method=setting.method,
        dense_weight=setting.dense_weight,
        rrf_k=setting.rrf_k,
        context=setting.context,
    )
    hits = cover(rankings, k, provider=provider, diversity=setting.diversity)
    return [hit.tool for hit in hits]


class _Ranker:
    """Each query's top ten under a setting, every distinct ranking computed once.

    A single-need query ranks the same in ``hybrid`` and ``coverage`` mode and under every
    context share and diversity penalty, and a tuned setting may equal the configured one.
    """

    def __init__(self, providers: Mapping[str, Mapping[str, str]]) -> None:
        self.providers = providers
        self._memo: dict[tuple[str, str, Setting, bool], list[str]] = {}

    def __call__(self, item: _Lists, setting: Setting, coverage: bool) -> list[str]:
        """``item``'s top ten as ``setting`` (with coverage or not) ranks it."""
        covered = coverage and len(item.per_need) > 1
        if not covered:
            setting = replace(setting, context=0.0, diversity=0.0)
        key = (item.bench, item.query.query_id, setting, covered)
        if key not in self._memo:
            self._memo[key] = rank_query(
                item.context if covered else item.whole,
                item.per_need,
                setting,
                coverage=covered,
                provider=self.providers[item.bench],
            )
        return self._memo[key]


def _metrics(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k)
        out[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        out[f"completeness@{k}"] = completeness_at_k(ranked, gold, k)
    return out


def _best(
    grid: Sequence[Setting], lists: Sequence[_Lists], ranker: _Ranker, coverage: bool
) -> Setting:
    """The grid setting with the best mean NDCG@5 on ``lists`` (the first wins ties)."""
    best, best_score = grid[0], -1.0
    for setting in grid:
        score = sum(
            ndcg_at_k(ranker(item, setting, coverage), item.query.gold, 5) for item in lists
        ) / max(len(lists), 1)
        if score > best_score + 1e-12:
            best, best_score = setting, score
    return best


def tune(
    lists: Sequence[_Lists], providers: Mapping[str, Mapping[str, str]]
) -> tuple[Setting, Setting]:
    """The best hybrid and the best coverage setting on ``lists`` (dev queries only).

    Both maximize mean NDCG@5 over all of ``lists``: the hybrid over fusion method and weight,
    the coverage system jointly over those, the context share and the diversity penalty.

    Returns:
        ``(hybrid setting, coverage setting)``.

    Raises:
        ConfigError: ``lists`` is empty.
    """
    if not lists:
        raise ConfigError("fusion tuning needs dev queries; none were loaded")
    fusion_grid = [
        Setting(method, weight, rrf_k)
        for (method, rrf_k), weight in itertools.product(_GRID_METHODS, _GRID_WEIGHTS)
    ]
    coverage_grid = [
        replace(setting, context=context, diversity=diversity)
        for setting, context, diversity in itertools.product(
            fusion_grid, _GRID_CONTEXT, _GRID_DIVERSITY
        )
    ]
    ranker = _Ranker(providers)
    return (
        _best(fusion_grid, lists, ranker, coverage=False),
        _best(coverage_grid, lists, ranker, coverage=True),
    )


async def _lists_of(search: HybridToolSearch, bench: RetrievalBench, depth: int) -> list[_Lists]:
    """Every query's lists as the index's hybrid and coverage searches see them."""
    texts = [query.text for query in bench.queries]
    whole = await search.rankings(texts, depth=depth)
    found = await search.query_lists(texts, depth=depth)
    return [
        _Lists(
            query=query,
            bench=bench.name,
            part=query_part(query),
            needs=[need.text for need in item.needs],
            whole=pair,
            per_need=item.per_need,
            context=item.whole,
        )
        for query, pair, item in zip(bench.queries, whole, found, strict=True)
    ]


async def evaluate_retrieval(
    benches: Sequence[RetrievalBench],
    *,
    search_for: Callable[[str], HybridToolSearch],
    distractors: Sequence[ToolSpec] = (),
    depth: int = 100,
    prefill_chunk: int = 1024,
    on_progress: Callable[[str], Progress] | None = None,
    tune_on_dev: bool = True,
) -> EvalReport:
    """Evaluate every system on ``benches`` (each against its own pool plus ``distractors``).

    Args:
        benches: The query sets (see :func:`~.querysets.load_query_sets`); tuning uses their
            ``dev`` queries, so include the dev part.
        search_for: Builds the index of one data set (given its name), e.g. with an
            ``index_dir`` of its own; its config gives the ``hybrid`` and ``coverage`` systems.
        distractors: Extra tools for every pool (copies of pool tools are dropped).
        depth: Candidates per retriever and query.
        prefill_chunk: Documents per saved embedding chunk (when the index persists).
        on_progress: Given a data-set name, the embedding progress callback for its pool.
        tune_on_dev: Also tune fusion and coverage on the dev queries (minutes on two cores).

    Returns:
        The report. Systems: ``bm25``, ``dense``, ``hybrid_minmax`` (:data:`MINMAX`), ``hybrid``
        and ``coverage`` (the index's config) and, with ``tune_on_dev``, ``hybrid_tuned`` and
        ``coverage_tuned`` (tuned on dev for this pool and model).
    """
    from .prefill import prefill

    lists: list[_Lists] = []
    providers: dict[str, dict[str, str]] = {}
    pools: dict[str, int] = {}
    dropped = 0
    config: RetrievalConfig | None = None
    model = "?"
    for bench in benches:
        search = search_for(bench.name)
        config = search.config
        extra, removed = drop_duplicates(bench.tools, distractors)
        dropped += removed
        pool = [*bench.tools, *extra]
        if config.index_dir is not None:
            callback = on_progress(bench.name) if on_progress is not None else None
            await prefill(search, pool, chunk=prefill_chunk, on_progress=callback)
        await search.update(pool)
        model = getattr(search.encoder, "name", "?")
        pools[bench.name] = len(pool)
        providers[bench.name] = {tool.id: provider_of(tool) for tool in pool}
        lists.extend(await _lists_of(search, bench, depth))
    if config is None:
        raise ConfigError("no query sets to evaluate")
    configured = Setting.of(config)
    settings: dict[str, tuple[Setting, bool]] = {
        "hybrid_minmax": (MINMAX, False),
        "hybrid": (configured, False),
        "coverage": (configured, True),
    }
    chosen = {"hybrid_minmax": MINMAX.as_dict(), "configured": configured.as_dict()}
    if tune_on_dev:
        dev = [item for item in lists if item.part == "dev"]
        hybrid_tuned, coverage_tuned = tune(dev, providers)
        settings["hybrid_tuned"] = (hybrid_tuned, False)
        settings["coverage_tuned"] = (coverage_tuned, True)
        chosen["hybrid_tuned_on_dev"] = hybrid_tuned.as_dict()
        chosen["coverage_tuned_on_dev"] = coverage_tuned.as_dict()
    ranked = {
        "bm25": [[tool for tool, _ in item.whole[1][:_TOP]] for item in lists],
        "dense": [[tool for tool, _ in item.whole[0][:_TOP]] for item in lists],
    }
    ranker = _Ranker(providers)
    for system, (setting, coverage) in settings.items():
        ranked[system] = [ranker(item, setting, coverage) for item in lists]
    report = EvalReport(
        pools=pools,
        queries={part: sum(item.part == part for item in lists) for part in ("dev", "test")},
        model=model,
        settings=chosen,
        distractors_dropped=dropped,
    )
    _score(report, lists, ranked)
    report.rankings = [
        {
            "id": item.query.query_id,
            "set": item.bench,
            "part": item.part,
            "kind": _kind(item.query),
            "gold": list(item.query.gold),
            "needs": item.needs,
            "top": {system: ranked[system][i] for system in ranked},
        }
        for i, item in enumerate(lists)
    ]
    return report


def _score(
    report: EvalReport, lists: Sequence[_Lists], ranked: Mapping[str, list[list[str]]]
) -> None:
    sets = sorted({item.bench for item in lists})
    for part in ("dev", "test"):
        for set_name in [*sets, "all"]:
            for kind in KINDS:
                members = [
                    i
                    for i, item in enumerate(lists)
                    if item.part == part
                    and set_name in (item.bench, "all")
                    and kind in (_kind(item.query), "all")
                ]
                if not members:
                    continue
                rows = {
                    system: [_metrics(rankings[i], lists[i].query.gold) for i in members]
                    for system, rankings in ranked.items()
                }
                where = (part, set_name, kind)
                _put(
                    report.scores,
                    where,
                    {
                        system: {m: sum(r[m] for r in per) / len(per) for m in per[0]}
                        for system, per in rows.items()
                    },
                )
                _put(
                    report.intervals,
                    where,
                    {
                        system: {m: bootstrap_mean([r[m] for r in per]).as_dict() for m in HEADLINE}
                        for system, per in rows.items()
                    },
                )
                _put(
                    report.paired,
                    where,
                    {
                        f"{system} - {baseline}": {
                            m: paired_bootstrap_difference(
                                [r[m] for r in rows[system]], [r[m] for r in rows[baseline]]
                            ).as_dict()
                            for m in HEADLINE
                        }
                        for system, baseline in PAIRS
                    },
                )


def _put(tree: dict[str, Any], path: Sequence[str], value: Any) -> None:
    for key in path[:-1]:
        tree = tree.setdefault(key, {})
    tree[path[-1]] = value


def report_table(report: EvalReport, part: str = "test") -> Any:
    """A rich table of one part: a row per data set, kind and system (NDCG/Completeness@5)."""
    from rich.table import Table

    table = Table(title=f"tool retrieval ({part} part; pools {report.pools})")
    for column in ("set", "kind", "system", "n", "NDCG@5 [95% CI]", "compl@5 [95% CI]"):
        table.add_column(column, justify="right" if column == "n" else "left")
    for set_name, kinds in report.intervals.get(part, {}).items():
        for kind, systems in kinds.items():
            for system, values in systems.items():
                ndcg, complete = (values[m] for m in HEADLINE)
                table.add_row(
                    set_name,
                    kind,
                    system,
                    str(ndcg["n"]),
                    percent_cell(ndcg),
                    percent_cell(complete),
                )
    return table


def percent_cell(interval: Mapping[str, float]) -> str:
    """An :meth:`Interval.as_dict <paraagent_runtime.intervals.Interval.as_dict>` in percent."""
    return (
        f"{100 * interval['estimate']:.1f} "
        f"[{100 * interval['low']:.1f}, {100 * interval['high']:.1f}]"
    )


def write_report(report: EvalReport, out_dir: str | Path) -> list[Path]:
    """Write ``retrieval_eval.json`` (scores, intervals, paired differences, rankings).

    Returns:
        The paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "retrieval_eval.json"
    path.write_text(json.dumps(report.as_dict(), indent=1), encoding="utf-8")
    return [path]

"""Step-, phase- and trajectory-level rewards of one episode against its ToolEnv task.

The three levels of ParaAgent's multi-level advantage decoupling (DESIGN §6):

- **step** (one per assistant turn): grammar validity; in explore turns, gold tools newly surfaced
  by ``search_tools``/``inspect_tool`` minus duplicate calls; in execute turns, the share of valid
  calls, the gold DAG nodes newly satisfied and a bonus for satisfying several in one turn.
- **phase** (one per maximal run of explore or execute turns): explore segments score the gold
  recall they add, the share of tools they surfaced that later get called, and the NDCG of their
  searches; execute segments score the share of the gold DAG they complete and the DAG levels they
  finish per turn.
- **trajectory**: the answer is correct per :func:`~paraagent_runtime.checker.check_answer`, the
  format is clean, and (only when correct) the episode is efficient.

A call satisfies a gold node when it names the node's tool, succeeded, and its arguments match
the node's: bound arguments are resolved from the outputs this episode observed (or matched
against the recorded gold value), and values are compared leniently (case, punctuation, numeric
strings, small float differences; free text of three words or more by word overlap).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from paraagent_runtime import (
    META_TOOLS,
    SEARCH_TOOLS,
    ConfigError,
    Episode,
    GoldCall,
    Task,
    ToolResult,
    TurnRecord,
    check_answer,
    model_facing_name,
    resolve_binding,
)
from paraagent_runtime.actions import infer_phase
from training.config import option

__all__ = [
    "EpisodeRewards",
    "PhaseReward",
    "RewardConfig",
    "StepKind",
    "StepReward",
    "args_match",
    "score_episode",
]

StepKind = Literal["explore", "execute", "final"]
"""What a turn did: searched/inspected, called loaded tools, or answered (or did nothing)."""


@dataclass
class RewardConfig:
    """Weights of every reward term.

    Parameters:
        step_format (`float`, defaults to `0.2`): step reward for a turn that follows the grammar
            (a turn with format errors gets the negative of it).
        step_new_gold_tool (`float`, defaults to `1.0`): explore step reward for surfacing all gold
            tools (scaled by the share surfaced for the first time in this turn).
        step_duplicate (`float`, defaults to `0.2`): penalty per call repeating an earlier call of
            the episode (same name and arguments).
        step_valid_call (`float`, defaults to `0.3`): execute step reward for a turn whose calls all
            succeeded (scaled by the share that did).
        step_gold_call (`float`, defaults to `1.0`): execute step reward for satisfying the whole
            gold DAG (scaled by the share of nodes newly satisfied in this turn).
        step_parallel_bonus (`float`, defaults to `0.3`): execute step bonus for satisfying as many
            gold nodes in one turn as the DAG's widest level allows.
        step_premature (`float`, defaults to `0.0`): execute step penalty per call made before its
            inputs exist: it names the tool of unsatisfied gold nodes none of whose dependencies
            were all satisfied when the turn began, and satisfies none itself (a guessed chained
            call runs, so it counts as valid otherwise). Off by default, as in the paper.
        phase_recall (`float`, defaults to `1.0`): explore phase weight of the gold-tool recall the
            segment adds.
        phase_used_share (`float`, defaults to `0.5`): explore phase weight of the share of tools
            surfaced in the segment that are called later.
        phase_ndcg (`float`, defaults to `0.5`): explore phase weight of the mean NDCG of the
            segment's searches (gold tools are the relevant ones).
        phase_dag_completed (`float`, defaults to `1.0`): execute phase weight of the share of gold
            nodes the segment satisfies.
        phase_levels_per_turn (`float`, defaults to `0.5`): execute phase weight of gold DAG levels
            finished per turn of the segment (capped at 1).
        traj_correct (`float`, defaults to `1.0`): trajectory reward for a correct final answer.
        traj_format (`float`, defaults to `0.2`): trajectory weight of the share of well-formed
            turns (0 when the episode never answers).
        traj_efficiency (`float`, defaults to `0.3`): trajectory weight of efficiency (ideal vs
            actual turns and calls), counted only when the answer is correct.
        traj_facts (`float`, defaults to `0.0`): trajectory weight of the share of the task's
            gold facts the final answer states (partial credit: a wrong answer that gets some
            facts right scores above one that gets none). Off by default, as in the paper.
        arg_rel_tol (`float`, defaults to `1e-3`): relative tolerance when comparing numeric
            arguments with gold ones.
    """

    step_format: float = option(
        0.2, help="Step reward for a grammatical turn (negated for a bad one)."
    )
    step_new_gold_tool: float = option(
        1.0, help="Explore step: weight of gold tools newly surfaced."
    )
    step_duplicate: float = option(0.2, help="Penalty per call repeating an earlier call.")
    step_valid_call: float = option(
        0.3, help="Execute step: weight of the share of successful calls."
    )
    step_gold_call: float = option(1.0, help="Execute step: weight of gold nodes newly satisfied.")
    step_parallel_bonus: float = option(0.3, help="Execute step: bonus for useful parallel width.")
    step_premature: float = option(
        0.0, help="Execute step: penalty per call made before its gold inputs exist."
    )
    phase_recall: float = option(
        1.0, help="Explore phase: weight of the gold recall the segment adds."
    )
    phase_used_share: float = option(
        0.5, help="Explore phase: weight of surfaced tools later called."
    )
    phase_ndcg: float = option(0.5, help="Explore phase: weight of the searches' NDCG.")
    phase_dag_completed: float = option(1.0, help="Execute phase: weight of gold nodes satisfied.")
    phase_levels_per_turn: float = option(0.5, help="Execute phase: weight of DAG levels per turn.")
    traj_correct: float = option(1.0, help="Trajectory reward for a correct answer.")
    traj_format: float = option(0.2, help="Trajectory weight of the share of well-formed turns.")
    traj_efficiency: float = option(
        0.3, help="Trajectory weight of efficiency (only when correct)."
    )
    traj_facts: float = option(
        0.0, help="Trajectory weight of the share of gold facts the answer states."
    )
    arg_rel_tol: float = option(1e-3, help="Relative tolerance for numeric argument matches.")

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not math.isfinite(value)
            ):
                raise ConfigError(f"RewardConfig.{name}: must be a finite number, got {value!r}")
            if value < 0:
                raise ConfigError(
                    f"RewardConfig.{name}: must be >= 0 (penalties are subtracted), got {value}"
                )

    def trajectory_weights(self) -> dict[str, float]:
        """The weight of each trajectory reward component, by its name in ``EpisodeRewards``."""
        return {
            "correct": self.traj_correct,
            "format": self.traj_format,
            "efficiency": self.traj_efficiency,
            "facts": self.traj_facts,
        }


@dataclass
class StepReward:
    """The reward of one assistant turn.

    Attributes:
        turn: Index of the turn in the episode.
        kind: What the turn did (``explore``, ``execute`` or ``final``).
        value: The weighted reward.
        components: The unweighted terms, by name.
    """

    turn: int
    kind: StepKind
    value: float
    components: dict[str, float] = field(default_factory=dict)


@dataclass
class PhaseReward:
    """The reward of one phase segment (a maximal run of explore or execute turns).

    Attributes:
        kind: ``explore`` or ``execute``.
        turns: Indices of the segment's turns.
        value: The weighted reward.
        components: The unweighted terms, by name.
    """

    kind: Literal["explore", "execute"]
    turns: list[int]
    value: float
    components: dict[str, float] = field(default_factory=dict)


@dataclass
class EpisodeRewards:
    """Rewards of one episode at the three levels.

    Attributes:
        steps: One per turn, in turn order.
        phases: One per phase segment, in order.
        trajectory: The weighted trajectory reward.
        trajectory_components: Its unweighted terms (``correct``, ``format``, ``efficiency``,
            ``facts``).
        success: The checker's verdict on the final answer.
        n_turns: Turns in the episode.
    """

    steps: list[StepReward]
    phases: list[PhaseReward]
    trajectory: float
    trajectory_components: dict[str, float]
    success: bool
    n_turns: int

    def phase_of_turn(self) -> dict[int, int]:
        """Turn index → index in :attr:`phases` of the segment holding it."""
        return {turn: index for index, phase in enumerate(self.phases) for turn in phase.turns}


# -- argument matching -------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_FREE_TEXT_WORDS = 3


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _values_match(expected: Any, actual: Any, rel_tol: float) -> bool:
    if isinstance(expected, list) and not isinstance(actual, list):
        return len(expected) == 1 and _values_match(expected[0], actual, rel_tol)
    if isinstance(expected, list):
        return len(expected) == len(actual) and all(
            _values_match(e, a, rel_tol) for e, a in zip(expected, actual, strict=True)
        )
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and expected.keys() == actual.keys()
            and all(_values_match(expected[k], actual[k], rel_tol) for k in expected)
        )
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        number = _as_number(actual)
        return number is not None and math.isclose(number, expected, rel_tol=rel_tol, abs_tol=1e-6)
    if isinstance(expected, str) and isinstance(actual, str):
        want, got = _words(expected), _words(actual)
        if len(want) >= _FREE_TEXT_WORDS:
            # Free text (subjects, bodies): any wording sharing most of the words will do.
            return len(set(want) & set(got)) / len(set(want) | set(got)) >= 0.5
        return want == got
    return expected == actual


def args_match(
    gold: GoldCall,
    arguments: dict[str, Any],
    observed: dict[str, Any],
    *,
    rel_tol: float = 1e-3,
) -> bool:
    """True when ``arguments`` carry every gold argument of ``gold`` (leniently compared).

    Extra arguments (optional ones the gold call left to their defaults) are allowed. A bound
    argument matches the value resolved from ``observed`` (outputs of the episode's calls, by gold
    node id) or, when that cannot be resolved or differs, the value recorded in the task.

    Args:
        gold: The gold node.
        arguments: The arguments of the model's call.
        observed: Outputs the episode observed, by the gold node they satisfied.
        rel_tol: Relative tolerance for numbers.
    """
    for name, recorded in gold.arguments.items():
        if name not in arguments:
            return False
        candidates = [recorded]
        reference = gold.bindings.get(name)
        if reference is not None:
            try:
                candidates.insert(0, resolve_binding(observed, reference))
            except (KeyError, IndexError, TypeError, ValueError):
                pass
        if not any(_values_match(value, arguments[name], rel_tol) for value in candidates):
            return False
    return True


# -- scoring -----------------------------------------------------------------------------------


def _turn_kind(turn: TurnRecord) -> StepKind:
    if not turn.calls:
        return "final"
    phase = turn.phase or infer_phase(turn.calls)
    return "explore" if phase == "explore" else "execute"


def _surfaced(result: ToolResult) -> list[str]:
    """Tool names a meta-tool result revealed, in rank order."""
    if not result.ok:
        return []
    content = result.content
    items = content if isinstance(content, list) else [content]
    return [
        item["name"]
        for item in items
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    ]


def _ndcg(ranked: Sequence[str], relevant: set[str]) -> float:
    """NDCG of one search: the ideal ranks the gold tools it returned first (0 when none).

    A query usually targets one of several gold tools, so the ideal is built from the gold tools
    the search found (recall is scored apart), not from all of them.
    """
    hits = [rank for rank, name in enumerate(ranked) if name in relevant]
    if not hits:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 2) for rank in hits)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(len(hits)))
    return dcg / ideal


@dataclass
class _TurnFacts:
    kind: StepKind
    new_gold_tools: set[str]
    surfaced: list[str]
    search_ndcgs: list[float]
    duplicates: int
    n_calls: int
    n_ok: int
    satisfied: list[str]
    premature: int = 0


class _Scorer:
    """Walks an episode once, tracking surfaced tools, satisfied gold nodes and observed outputs."""

    def __init__(self, task: Task, config: RewardConfig) -> None:
        self.task = task
        self.config = config
        self.gold_names = {model_facing_name(tool) for tool in task.tools}
        self.nodes = list(task.calls)
        self.node_names = {node.id: model_facing_name(node.tool) for node in self.nodes}
        self.surfaced: set[str] = set()
        self.satisfied: set[str] = set()
        self.observed: dict[str, Any] = {}
        self.seen_calls: set[str] = set()

    def turn(self, turn: TurnRecord) -> _TurnFacts:
        kind = _turn_kind(turn)
        facts = _TurnFacts(kind, set(), [], [], 0, len(turn.calls), 0, [])
        results = {result.call_id: result for result in turn.results}
        waiting = self._waiting_names()
        for call in turn.calls:
            key = call.dedup_key()
            if key in self.seen_calls:
                facts.duplicates += 1
            self.seen_calls.add(key)
            result = results.get(call.id)
            if result is None or not result.ok:
                facts.premature += call.name in waiting
                continue
            facts.n_ok += 1
            if call.name in META_TOOLS:
                names = _surfaced(result)
                facts.surfaced.extend(names)
                if call.name == SEARCH_TOOLS:
                    facts.search_ndcgs.append(_ndcg(names, self.gold_names))
                new = (set(names) & self.gold_names) - self.surfaced
                facts.new_gold_tools |= new
                self.surfaced |= new
                continue
            node = self._match(call.name, call.arguments)
            if node is not None:
                self.satisfied.add(node.id)
                self.observed[node.id] = result.content
                facts.satisfied.append(node.id)
            else:
                facts.premature += call.name in waiting
        if call_names := [call.name for call in turn.calls if call.name not in META_TOOLS]:
            # Calling a gold tool directly (it was preloaded or known) also counts as surfacing it.
            self.surfaced |= set(call_names) & self.gold_names
        return facts

    def _waiting_names(self) -> set[str]:
        """Tools whose every unsatisfied gold node still waits for a dependency's output."""
        open_nodes = [node for node in self.nodes if node.id not in self.satisfied]
        ready = {
            self.node_names[node.id]
            for node in open_nodes
            if all(dependency in self.satisfied for dependency in node.depends_on)
        }
        return {self.node_names[node.id] for node in open_nodes} - ready

    def _match(self, name: str, arguments: dict[str, Any]) -> GoldCall | None:
        for node in self.nodes:
            if node.id in self.satisfied or self.node_names[node.id] != name:
                continue
            if args_match(node, arguments, self.observed, rel_tol=self.config.arg_rel_tol):
                return node
        return None

    def completed_levels(self) -> int:
        return sum(all(node in self.satisfied for node in level) for level in self.task.levels())


def _step_reward(index: int, facts: _TurnFacts, valid: bool, scorer: _Scorer) -> StepReward:
    config = scorer.config
    components = {"format": 1.0 if valid else -1.0, "duplicates": float(facts.duplicates)}
    value = config.step_format * components["format"] - config.step_duplicate * facts.duplicates
    if facts.kind == "explore":
        components["new_gold_tools"] = len(facts.new_gold_tools) / max(len(scorer.gold_names), 1)
        value += config.step_new_gold_tool * components["new_gold_tools"]
    elif facts.kind == "execute":
        width = scorer.task.width
        components["valid_calls"] = facts.n_ok / max(facts.n_calls, 1)
        components["gold_calls"] = len(facts.satisfied) / max(len(scorer.nodes), 1)
        components["parallel"] = (
            (len(facts.satisfied) - 1) / (width - 1) if width > 1 and facts.satisfied else 0.0
        )
        components["parallel"] = min(max(components["parallel"], 0.0), 1.0)
        components["premature"] = float(facts.premature)
        value += (
            config.step_valid_call * components["valid_calls"]
            + config.step_gold_call * components["gold_calls"]
            + config.step_parallel_bonus * components["parallel"]
            - config.step_premature * components["premature"]
        )
    return StepReward(turn=index, kind=facts.kind, value=value, components=components)


def _segments(kinds: Sequence[StepKind]) -> list[tuple[Literal["explore", "execute"], list[int]]]:
    segments: list[tuple[Literal["explore", "execute"], list[int]]] = []
    for index, kind in enumerate(kinds):
        if kind == "final":
            continue
        if segments and segments[-1][0] == kind and segments[-1][1][-1] == index - 1:
            segments[-1][1].append(index)
        else:
            segments.append((kind, [index]))
    return segments


def _phase_rewards(
    kinds: Sequence[StepKind],
    facts: Sequence[_TurnFacts],
    later_called: Sequence[set[str]],
    levels_done: Sequence[int],
    scorer: _Scorer,
) -> list[PhaseReward]:
    config = scorer.config
    phases = []
    for kind, turns in _segments(kinds):
        if kind == "explore":
            surfaced = {name for t in turns for name in facts[t].surfaced}
            called = later_called[turns[-1]]
            ndcgs = [score for t in turns for score in facts[t].search_ndcgs]
            components = {
                "recall": len(set().union(*(facts[t].new_gold_tools for t in turns)))
                / max(len(scorer.gold_names), 1),
                "used_share": len(surfaced & called) / len(surfaced) if surfaced else 0.0,
                "ndcg": sum(ndcgs) / len(ndcgs) if ndcgs else 0.0,
            }
            value = (
                config.phase_recall * components["recall"]
                + config.phase_used_share * components["used_share"]
                + config.phase_ndcg * components["ndcg"]
            )
        else:
            before = levels_done[turns[0] - 1] if turns[0] > 0 else 0
            components = {
                "dag_completed": sum(len(facts[t].satisfied) for t in turns)
                / max(len(scorer.nodes), 1),
                "levels_per_turn": min((levels_done[turns[-1]] - before) / len(turns), 1.0),
            }
            value = (
                config.phase_dag_completed * components["dag_completed"]
                + config.phase_levels_per_turn * components["levels_per_turn"]
            )
        phases.append(PhaseReward(kind=kind, turns=turns, value=value, components=components))
    return phases


def score_episode(
    episode: Episode, task: Task, config: RewardConfig | None = None
) -> EpisodeRewards:
    """Score ``episode`` (a run of the agent on ``task``) at the step, phase and trajectory levels.

    Args:
        episode: The finished episode (its turns carry calls and results).
        task: The ToolEnv task it ran, with the gold DAG and answer facts.
        config: Reward weights (defaults: :class:`RewardConfig`).

    Raises:
        ConfigError: The episode is for another task (its ``task_id`` is set and differs).
    """
    config = config or RewardConfig()
    if episode.task_id is not None and episode.task_id != task.id:
        raise ConfigError(
            f"score_episode: episode is for task {episode.task_id!r}, not {task.id!r}"
        )
    scorer = _Scorer(task, config)
    facts: list[_TurnFacts] = []
    levels_done: list[int] = []
    for turn in episode.turns:
        facts.append(scorer.turn(turn))
        levels_done.append(scorer.completed_levels())
    kinds = [fact.kind for fact in facts]
    later_called: list[set[str]] = [set() for _ in episode.turns]
    called: set[str] = set()
    for index in range(len(episode.turns) - 1, -1, -1):
        later_called[index] = set(called)
        called |= {call.name for call in episode.turns[index].calls if call.name not in META_TOOLS}
    steps = [
        _step_reward(index, fact, not turn.format_errors, scorer)
        for index, (turn, fact) in enumerate(zip(episode.turns, facts, strict=True))
    ]
    phases = _phase_rewards(kinds, facts, later_called, levels_done, scorer)

    answered = episode.status == "answered" and episode.answer is not None
    verdict = check_answer(task, episode.answer or "") if answered else None
    success = verdict is not None and verdict.success
    n_turns = len(episode.turns)
    valid_share = (
        sum(not turn.format_errors for turn in episode.turns) / n_turns if n_turns else 0.0
    )
    efficiency = 0.0
    if success:
        tool_turns = sum(kind != "final" for kind in kinds)
        ideal_turns = task.depth + (1 if "explore" in kinds else 0)
        exec_calls = sum(fact.n_calls for fact in facts if fact.kind == "execute")
        turn_eff = ideal_turns / max(tool_turns, ideal_turns)
        call_eff = len(task.calls) / max(exec_calls, len(task.calls))
        efficiency = 0.5 * (turn_eff + call_eff)
    components = {
        "correct": 1.0 if success else 0.0,
        "format": valid_share if answered else 0.0,
        "efficiency": efficiency,
        "facts": verdict.score if verdict is not None else 0.0,
    }
    weights = config.trajectory_weights()
    trajectory = sum(weights[name] * value for name, value in components.items())
    return EpisodeRewards(
        steps=steps,
        phases=phases,
        trajectory=trajectory,
        trajectory_components=components,
        success=success,
        n_turns=n_turns,
    )

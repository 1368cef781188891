"""The configuration of a demonstration run (``paraagent train demos --config …``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paraagent_runtime import DEMO_MAX_TURNS, MODES, ConfigError, refuse_test_split

from ..config import option
from ..task_source import TaskSource
from .roles import (
    ANSWER_NOTES,
    FIRST_SEARCHES,
    NEED_WORDS,
    AnswerNotes,
    FirstSearch,
    NeedWords,
)

__all__ = ["DemoConfig"]


def _check_fraction(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name}: must be within [0, 1], got {value}")


@dataclass
class DemoConfig:
    """Multi-agent cold-start demonstrations over ToolEnv tasks.

    Tasks come from ``task_source`` (:mod:`training.task_source`: the built-in families, catalog
    tasks over the real catalog with distractors, or a mix), ``n_tasks`` of ``split``; each one is
    played by the planner / explorer / executor / verifier roles through the runtime's
    agent loop, filtered, and balanced over the G1/G2/G3 groups.
    """

    n_tasks: int = option(120, help="Candidate ToolEnv tasks to demonstrate (before filtering).")
    n_demos: int | None = option(
        None, help="Demos to keep after filtering and balancing; None keeps every balanced demo."
    )
    seed: int = option(0, help="Seed of the task generator and of every role's choices.")
    split: str = option("train", help="ToolEnv task split to draw from.")
    families: tuple[str, ...] | None = option(
        None, help="Built-in ToolEnv task families to use (default: all)."
    )
    task_source: TaskSource = option(
        help="Where tasks come from: builtin, catalog or mixed (a mapping of TaskSource fields).",
        factory=TaskSource,
    )
    mode: str = option(
        "paraact",
        help="Demo style: paraact (phases, parallel calls), react (one call per turn), "
        "or decoupled.",
    )
    search_top_k: int = option(
        3, help="top_k of the explorer's search_tools calls (small keeps prompts compact)."
    )
    need_words: NeedWords = option(
        "request",
        help="How needs and their searches are worded: request (the piece of the request a tool "
        "serves) or description (the gold tool's description, as v1's and v2's demos were).",
    )
    first_search: FirstSearch = option(
        "need",
        help="The first search: need (one per need) or request (one with the whole request, then "
        "one per need for the tools it missed).",
    )
    answer_notes: AnswerNotes = option(
        "labels",
        help="What the answer turn's reasoning lists: labels (the first four facts) or sources "
        "(every fact with the result field it was read from: tool(argument).field).",
    )
    lazy_explore_prob: float = option(
        0.35,
        help="Share of episodes that explore just in time (search before each DAG level) "
        "instead of "
        "all tools up front; gives trajectories with several phase switches (paraact mode only).",
    )
    recovery_prob: float = option(
        0.25,
        help="Share of episodes where the executor makes one recoverable mistake (a wrong tool, "
        "or a call missing a required argument) and then fixes it.",
    )
    max_recovered_share: float = option(
        0.2, help="Upper bound on the share of recovered-failure demos in the balanced set."
    )
    failure_rate: float = option(
        0.0, help="ToolEnv injected transient failure rate per call attempt."
    )
    turn_slack: int = option(
        3,
        help="Filter: tool turns must be <= gold depth + turn_slack "
        "(react: gold calls + tools + slack).",
    )
    max_irrelevant_calls: int = option(
        1, help="Filter: at most this many calls of tools outside the gold DAG."
    )
    max_turns: int = option(DEMO_MAX_TURNS, help="Agent max_turns for a demonstration episode.")
    balance_groups: bool = option(
        True, help="Keep equally many G1, G2 and G3 demos (as far as available)."
    )
    output_dir: Path = option(
        Path("runs/demos"), help="Where demos.jsonl, rejected.jsonl and the dataset card go."
    )

    def __post_init__(self) -> None:
        refuse_test_split(self.split, owner="split")
        self.task_source = TaskSource.of(self.task_source, owner="task_source")
        if self.n_tasks < 1:
            raise ConfigError(f"n_tasks: need at least 1 task, got {self.n_tasks}")
        if self.n_demos is not None and self.n_demos < 1:
            raise ConfigError(f"n_demos: must be >= 1 or null (keep all), got {self.n_demos}")
        if self.mode not in MODES:
            raise ConfigError(
                f"mode: unknown demo mode {self.mode!r}; use one of {', '.join(MODES)}"
            )
        if not 1 <= self.search_top_k <= 20:
            raise ConfigError(
                f"search_top_k: must be within 1..20 (search_tools' limit), got {self.search_top_k}"
            )
        for name, allowed in (
            ("need_words", NEED_WORDS),
            ("first_search", FIRST_SEARCHES),
            ("answer_notes", ANSWER_NOTES),
        ):
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"{name}: use one of {', '.join(allowed)}, got {getattr(self, name)!r}"
                )
        for name in ("lazy_explore_prob", "recovery_prob", "max_recovered_share", "failure_rate"):
            _check_fraction(name, getattr(self, name))
        if self.turn_slack < 0 or self.max_irrelevant_calls < 0:
            raise ConfigError("turn_slack and max_irrelevant_calls must be >= 0")
        if self.max_turns < 2:
            raise ConfigError(
                "max_turns: a demo needs at least 2 turns (a call and an answer), "
                f"got {self.max_turns}"
            )
        if self.families is not None:
            from mcp_servers.toolenv.tasks import FAMILIES

            unknown = sorted(set(self.families) - set(FAMILIES))
            if unknown or not self.families:
                raise ConfigError(
                    f"families: unknown {unknown or '(empty list)'}; "
                    f"choose from {', '.join(sorted(FAMILIES))}"
                )
        self.output_dir = Path(self.output_dir)

"""What the repetition guard would have cut from recorded episodes, and what it would have lost.

The agent ends an episode with status ``repeating`` once ``max_repeated_turns`` turns in a row
made the same calls and got the same results (:class:`paraagent_runtime.RepeatCounter`). This
replays that rule over trajectory files (``trajectories-*.jsonl`` of ``paraagent eval toolenv``
or ``paraagent run``, recorded without the guard) for each limit, and reports per file and in
total: the episodes it stops, the successes and answers among them (what stopping would lose:
a stopped episode has no answer), and the turns and model + tool seconds after the stop (what
it saves). Run ``python -m benchmarks.repetition_guard FILE... [--limits 2 3 4] [--out STEM]``.
Prints one JSON object, then a table; ``--out`` also writes STEM.json and STEM.md.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from paraagent_runtime import Episode, RepeatCounter, read_episodes

DEFAULT_LIMITS = (2, 3, 4, 5)
COLUMNS = (
    "run",
    "limit",
    "episodes",
    "stopped",
    "successes lost",
    "answers lost",
    "turns cut",
    "time cut",
)


@dataclass
class GuardOutcome:
    """What one limit does to one set of episodes."""

    limit: int
    episodes: int
    stopped: int = 0
    successes_lost: int = 0
    answers_lost: int = 0
    turns: int = 0
    turns_cut: int = 0
    seconds: float = 0.0
    seconds_cut: float = 0.0


def stop_turn(episode: Episode, limit: int) -> int | None:
    """The position of the turn the guard would have stopped ``episode`` at, or None."""
    counter = RepeatCounter()
    for position, turn in enumerate(episode.turns):
        # A turn cut short (cancelled calls) has no full results: it breaks the streak.
        if not turn.calls or len(turn.results) != len(turn.calls):
            counter.reset()
        elif counter.add(turn.calls, turn.results) >= limit:
            return position
    return None


def replay(episodes: list[Episode], limit: int) -> GuardOutcome:
    """Replay the guard at ``limit`` over ``episodes``."""
    outcome = GuardOutcome(limit, len(episodes))
    for episode in episodes:
        spent = [turn.model_latency_s + turn.tools_latency_s for turn in episode.turns]
        outcome.turns += len(episode.turns)
        outcome.seconds += sum(spent)
        stop = stop_turn(episode, limit)
        if stop is None:
            continue
        outcome.stopped += 1
        outcome.successes_lost += bool(episode.metadata.get("success"))
        outcome.answers_lost += episode.status == "answered"
        outcome.turns_cut += len(episode.turns) - stop - 1
        outcome.seconds_cut += sum(spent[stop + 1 :])
    return outcome


def _label(path: Path, episodes: list[Episode]) -> str:
    """``model · split · mode`` of a file's episodes (its path when they do not say)."""
    first = episodes[0] if episodes else None
    split = first.metadata.get("split") if first else None
    if first is None or split is None:
        return str(path)
    policy = str(first.metadata.get("policy") or first.model)
    if policy.endswith("/adapter"):  # local:runs/sft/NAME/adapter
        policy = policy.split(":", 1)[0] + ":" + Path(policy).parent.name
    return f"{policy} · {split} · {first.mode}"


def main(argv: list[str] | None = None) -> dict[str, object]:
    """Replay the guard over the files on the command line; print and return the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="trajectory JSONL files")
    parser.add_argument("--limits", nargs="+", type=int, default=list(DEFAULT_LIMITS))
    parser.add_argument("--out", type=Path, help="also write STEM.json and STEM.md")
    args = parser.parse_args(argv)
    if any(limit < 2 for limit in args.limits):
        parser.error("--limits: each limit must be at least 2")
    files = {path: list(read_episodes(path)) for path in args.files}
    rows = [
        (_label(path, episodes), [replay(episodes, limit) for limit in args.limits])
        for path, episodes in files.items()
    ]
    everything = [episode for episodes in files.values() for episode in episodes]
    totals = [replay(everything, limit) for limit in args.limits]
    report: dict[str, object] = {
        "runs": [
            {"file": str(path), "label": label, "outcomes": [asdict(o) for o in outcomes]}
            for path, (label, outcomes) in zip(files, rows, strict=True)
        ],
        "total": [asdict(total) for total in totals],
    }
    rows.append(("all", totals))
    text = json.dumps(report, indent=2)
    print(text)
    table = Table(title="repetition guard replayed over recorded episodes")
    for column in COLUMNS:
        table.add_column(column)
    for label, outcomes in rows:
        for outcome in outcomes:
            table.add_row(*_cells(label, outcome))
    Console(width=140).print(table)
    if args.out is not None:
        args.out.with_suffix(".json").write_text(text + "\n")
        args.out.with_suffix(".md").write_text(_markdown(rows))
    return report


def _cells(label: str, outcome: GuardOutcome) -> list[str]:
    """One table row: a run at one limit."""
    share = outcome.seconds_cut / outcome.seconds if outcome.seconds else 0.0
    return [
        label,
        str(outcome.limit),
        str(outcome.episodes),
        str(outcome.stopped),
        str(outcome.successes_lost),
        str(outcome.answers_lost),
        f"{outcome.turns_cut}/{outcome.turns}",
        f"{outcome.seconds_cut:.0f}/{outcome.seconds:.0f} s ({share:.0%})",
    ]


def _markdown(rows: list[tuple[str, list[GuardOutcome]]]) -> str:
    """The table as markdown."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for label, outcomes in rows:
        lines += ["| " + " | ".join(_cells(label, outcome)) + " |" for outcome in outcomes]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

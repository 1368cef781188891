from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from paraagent_runtime import EpisodeMetrics
from paraagent_runtime.errors import ConfigError
from paraagent_runtime.trajectory import Episode, TrajectoryWriter
from training.experiments.heldout import HeldoutScore, cached_score, save_score
from training.experiments.pooled import (
    EpisodeSource,
    pool_evaluations,
    pooled_family_table,
    pooled_table,
)
from training.rl.cli import rl_app

# (policy, task, success, share of gold facts stated)
Outcome = tuple[str, str, bool, float]


def _write(path: Path, outcomes: list[Outcome], families: dict[str, str] | None = None) -> Path:
    """Episodes with their metrics; ``families`` maps a task to its family (default ``f``)."""
    with TrajectoryWriter(path) as writer:
        for policy, task, success, facts in outcomes:
            family = (families or {}).get(task, "f")
            metrics = EpisodeMetrics.model_validate(
                {name: 0 for name in EpisodeMetrics.model_fields}
                | {"task_id": task, "family": family, "group": "G1", "mode": "paraact"}
                | {"status": "answered", "success": success, "score": facts}
            )
            metadata = {"policy": policy, "metrics": metrics.model_dump()}
            writer.write(Episode(task_id=task, task=task, metadata=metadata))
    return path


@pytest.fixture
def evaluations(tmp_path: Path) -> dict[str, Path]:
    """The start evaluated twice (once alone, once in a file with the RL policy), the RL twice."""
    start = [("s", "a", False, 0.0), ("s", "a", False, 0.5)]
    start += [("s", "b", True, 1.0), ("s", "b", False, 0.5)]
    both = [("s", "a", True, 1.0), ("s", "a", False, 0.0), ("s", "b", False, 0.5)]
    both += [("s", "b", False, 0.5), ("rl", "a", True, 1.0), ("rl", "a", True, 1.0)]
    both += [("rl", "b", True, 1.0), ("rl", "b", False, 0.5)]
    final = [("rl", "a", True, 1.0), ("rl", "a", False, 0.5)]
    final += [("rl", "b", True, 1.0), ("rl", "b", True, 1.0)]
    return {
        "start": _write(tmp_path / "start.jsonl", start),
        "both": _write(tmp_path / "both.jsonl", both),
        "final": _write(tmp_path / "final.jsonl", final),
    }


def test_pooling_pairs_each_label_with_the_baseline_by_task(evaluations: dict[str, Path]) -> None:
    sources = [
        EpisodeSource("start", evaluations["start"]),
        EpisodeSource.parse(f"start={evaluations['both']}@s"),
        EpisodeSource.parse(f"rl={evaluations['final']}"),
        EpisodeSource.parse(f"rl={evaluations['both']}@rl"),
    ]
    start, rl = pool_evaluations(sources, baseline="start")
    assert (start.label, start.evaluations, start.episodes) == ("start", [0.25, 0.25], 8)
    assert start.score.per_task == {"a": 0.25, "b": 0.25}
    assert start.score.facts_per_task == {"a": 0.375, "b": 0.625}
    assert start.success_delta is None and start.facts_delta is None
    assert (rl.evaluations, rl.episodes, rl.paired_tasks) == ([0.75, 0.75], 8, 2)
    assert rl.evaluation_facts == [0.875, 0.875] and start.evaluation_facts == [0.5, 0.5]
    # Per task rl − start: success 0.5 and 0.5; facts 0.875 − 0.375 and 0.875 − 0.625.
    assert rl.success_delta is not None and rl.facts_delta is not None
    assert (rl.success_delta.estimate, rl.success_delta.low, rl.success_delta.high) == (
        pytest.approx(0.5),
        pytest.approx(0.5),
        pytest.approx(0.5),
    )
    assert (rl.facts_delta.estimate, rl.facts_delta.low, rl.facts_delta.high) == (
        pytest.approx(0.375),
        pytest.approx(0.25),
        pytest.approx(0.5),
    )
    table = pooled_table([start, rl])
    assert "| rl | 2 (0.750, 0.750) | 8 | 2 | 0.750 | +0.500 [+0.500, +0.500] | 0.875 |" in table
    assert "+0.375 [+0.250, +0.500]" in table


def test_only_tasks_both_policies_saw_are_paired(tmp_path: Path) -> None:
    start = _write(tmp_path / "s.jsonl", [("s", t, t == "c", 0.5) for t in "abc"])
    final = _write(tmp_path / "f.jsonl", [("f", "a", True, 1.0), ("f", "b", False, 0.5)])
    pooled = pool_evaluations(
        [EpisodeSource("start", start), EpisodeSource("rl", final)], baseline="start"
    )
    delta = pooled[1].success_delta
    assert pooled[1].paired_tasks == 2 and delta is not None
    # Differences +1 (a) and 0 (b); c, which only the start saw, is left out.
    assert (delta.estimate, delta.low, delta.high, delta.n) == (0.5, 0.0, 1.0, 2)
    lone = _write(tmp_path / "lone.jsonl", [("f", "a", True, 1.0)])
    single = pool_evaluations(
        [EpisodeSource("start", start), EpisodeSource("rl", lone)], baseline="start"
    )
    assert single[1].paired_tasks == 1 and single[1].success_delta is None


def test_a_family_that_regresses_shows_behind_one_that_improves(tmp_path: Path) -> None:
    families = {"w1": "weather", "w2": "weather", "c1": "chain", "c2": "chain"}
    start = [("s", t, t.startswith("c"), 0.5) for t in ("w1", "w2", "c1", "c2") for _ in "xy"]
    final = [("rl", t, t.startswith("w"), 0.75) for t in ("w1", "w2", "c1", "c2") for _ in "xy"]
    final[-1] = ("rl", "c2", True, 1.0)
    pooled = pool_evaluations(
        [
            EpisodeSource("start", _write(tmp_path / "s.jsonl", start, families)),
            EpisodeSource("rl", _write(tmp_path / "f.jsonl", final, families)),
        ],
        baseline="start",
    )
    base, rl = pooled
    # Overall: rl 5/8 vs start 4/8; weather 0/4 → 4/4, chain 4/4 → 1/4.
    # Per task: +1, +1, −1, −0.5.
    assert rl.success_delta is not None and rl.success_delta.n == 4
    assert rl.success_delta.estimate == pytest.approx(0.125)
    assert -1.0 <= rl.success_delta.low < 0.125 < rl.success_delta.high <= 1.0
    assert list(rl.by_family) == ["weather", "chain"]
    weather, chain = rl.by_family["weather"], rl.by_family["chain"]
    assert (weather.episodes, weather.success, weather.paired_tasks) == (4, 1.0, 2)
    assert weather.success_delta is not None and weather.success_delta.estimate == 1.0
    assert weather.success_delta.low == weather.success_delta.high == 1.0
    # c1: 0 − 1; c2: 0.5 − 1: the interval spans the two tasks' differences.
    assert chain.success == 0.25 and chain.success_delta is not None
    assert (chain.success_delta.estimate, chain.success_delta.low, chain.success_delta.high) == (
        pytest.approx(-0.75),
        pytest.approx(-1.0),
        pytest.approx(-0.5),
    )
    # c1: 0.75 − 0.5; c2: (0.75 + 1.0) / 2 − 0.5.
    assert chain.facts_delta is not None
    assert chain.facts_delta.estimate == pytest.approx(0.3125)
    assert base.by_family["chain"].success_delta is None
    table = pooled_family_table(pooled)
    assert table.splitlines()[0] == "| policy | weather | chain |"
    assert "| start | 0.000 (4) | 1.000 (4) |" in table
    assert (
        "| rl | 1.000 (4), Δ +1.000 [+1.000, +1.000] | 0.250 (4), Δ -0.750 [-1.000, -0.500] |"
        in table
    )
    # A label evaluated on one family only shows "-" under the other.
    weather_only = rl.model_copy(update={"label": "w", "by_family": {"weather": weather}})
    mixed = pooled_family_table([*pooled, weather_only])
    assert "| w | 1.000 (4), Δ +1.000 [+1.000, +1.000] | - |" in mixed
    args = ["pool", "--episodes", f"start={tmp_path / 's.jsonl'}"]
    result = CliRunner().invoke(rl_app, [*args, "--episodes", f"rl={tmp_path / 'f.jsonl'}"])
    assert result.exit_code == 0 and "success per family" in result.output


@pytest.mark.parametrize("spec", ["no-equals", "=x.jsonl", "label=", "label=x.jsonl@"])
def test_a_malformed_source_spec_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError, match="LABEL=PATH"):
        EpisodeSource.parse(spec)


def test_unreadable_sources_name_the_file_and_the_problem(
    tmp_path: Path, evaluations: dict[str, Path]
) -> None:
    with pytest.raises(ConfigError, match="no such episodes file"):
        EpisodeSource("x", tmp_path / "missing.jsonl").read()
    with pytest.raises(ConfigError, match=r"policy 'nope' \(policies there: rl, s\)"):
        EpisodeSource("x", evaluations["both"], "nope").read()
    bare = tmp_path / "bare.jsonl"
    with TrajectoryWriter(bare) as writer:
        writer.write(Episode(task="t", metadata={"policy": "p"}))
    with pytest.raises(ConfigError, match="carries no metrics"):
        EpisodeSource("x", bare).read()
    with pytest.raises(ConfigError, match="carries no metrics"):
        HeldoutScore.from_episodes(bare)
    # A cached score that lacks the facts keeps what it has when its episodes cannot give them.
    cache = tmp_path / "start.json"
    save_score(cache, {"step": 0}, HeldoutScore(success=0.5))
    kept = cached_score(cache, {"step": 0}, bare)
    assert kept is not None and kept.success == 0.5 and kept.facts is None
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"empty.jsonl: no episode \(policies there: none\)"):
        EpisodeSource("x", empty).read()
    broken = tmp_path / "broken.jsonl"
    broken.write_text(evaluations["final"].read_text() + '{"task": \n', encoding="utf-8")
    with pytest.raises(ConfigError, match="broken.jsonl:5"):
        EpisodeSource("x", broken).read()
    with pytest.raises(ConfigError, match="baseline"):
        pool_evaluations([EpisodeSource("rl", evaluations["final"])], baseline="start")


def test_pool_command_prints_the_table_and_writes_json(
    tmp_path: Path, evaluations: dict[str, Path]
) -> None:
    out, png = tmp_path / "tables" / "pooled.json", tmp_path / "plots" / "pooled.png"
    args = ["pool", "--episodes", f"start={evaluations['start']}"]
    args += ["--episodes", f"rl={evaluations['final']}", "--out", str(out), "--plot", str(png)]
    result = CliRunner().invoke(rl_app, args)
    assert result.exit_code == 0, result.output
    assert "| rl | 1 (0.750) | 4 | 2 | 0.750 |" in result.output
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert [row["label"] for row in rows] == ["start", "rl"]
    assert rows[1]["success_delta"] == {"estimate": 0.5, "low": 0.5, "high": 0.5, "n": 2}
    assert rows[1]["by_family"]["f"]["success"] == 0.75
    assert "per family" not in result.output  # one family: the overall table says it all
    assert png.read_bytes().startswith(b"\x89PNG")
    bad = CliRunner().invoke(rl_app, ["pool", "--episodes", "rl"])
    assert bad.exit_code == 2 and bad.output.startswith("error: ") and "Traceback" not in bad.output

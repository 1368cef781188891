from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcp_servers.toolenv import generate_tasks
from paraagent_runtime.intervals import wilson
from paraagent_runtime.policy.scripted import ScriptedPolicy
from paraagent_runtime.trajectory import TrajectoryWriter, read_episodes
from training.demos import DemoBuild
from training.evaluate import (
    SUMMARY_COLUMNS,
    EvalSummary,
    evaluate_policy,
    summaries_markdown,
    summary_cells,
)


async def test_replaying_a_demo_through_the_agent_reproduces_it(
    demo_build: DemoBuild, tmp_path
) -> None:
    demo = demo_build.demos[0]
    task = {t.id: t for t in generate_tasks(36, seed=3)}[demo.task_id]
    turns = [m.content for m in demo.messages if m.role == "assistant"]
    with TrajectoryWriter(tmp_path / "replay.jsonl") as writer:
        summary, rows = await evaluate_policy(
            ScriptedPolicy(turns), [task], model="replay", trajectory=writer
        )
    [episode] = read_episodes(tmp_path / "replay.jsonl")
    assert episode.messages == demo.messages
    assert summary.success_rate == 1.0 and summary.answered == 1
    assert summary.facts_stated == 1.0
    assert rows[0].turns == len(turns)
    assert rows[0].tool_calls == demo.calls


async def test_a_wrong_answer_scores_zero() -> None:
    task = generate_tasks(1, seed=0, families=["city_pair_facts"])[0]
    policy = ScriptedPolicy(["<answer>no idea</answer>"])
    summary, rows = await evaluate_policy(policy, [task], model="guess")
    assert summary.success_rate == 0.0 and rows[0].status == "answered"
    assert summary.facts_stated == 0.0
    assert summary.calls_per_execute_turn == 0.0


async def test_a_task_sampled_twice_counts_once_with_two_episodes() -> None:
    task = generate_tasks(1, seed=0, families=["city_pair_facts"])[0]
    policy = ScriptedPolicy(["<answer>no idea</answer>"] * 2)
    summary, rows = await evaluate_policy(policy, [task], model="guess", samples=2, temperature=1.0)
    assert (summary.tasks, summary.episodes, len(rows)) == (1, 2, 2)
    assert [row.task_id for row in rows] == [task.id, task.id]
    assert summary_cells({**summary.model_dump(), "split": "train"})[3] == "1 (2 episodes)"
    assert summary_cells({**summary.model_dump(), "episodes": 1, "tasks": 1})[3] == "1"
    # A summary saved before sampled evaluation existed reads back with one episode per task.
    recorded = Path(__file__).parents[2] / "docs/results/mode_comparison_seed0.json"
    old = EvalSummary.model_validate(json.loads(recorded.read_text())[0])
    assert old.episodes == old.tasks == 12
    assert old.facts_stated is None and summary_cells({**old.model_dump(), "split": "x"})[5] == "-"


def test_eval_command_covers_every_split_in_one_table(tiny_model: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from training.cli import train_app

    out = tmp_path / "eval.json"
    args = ["eval", "--model", str(tiny_model), "--n-tasks", "1", "--max-turns", "1"]
    args += ["--max-tokens", "4", "--split", "test-seen", "--split", "test-unseen-tools"]
    args += ["--samples", "2", "--temperature", "1.0", "--dtype", "bfloat16"]
    result = CliRunner().invoke(train_app, [*args, "--out", str(out), "--concurrency", "2"])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [(row["model"], row["split"], row["tasks"], row["episodes"]) for row in rows] == [
        ("base", "test-seen", 1, 2),
        ("base", "test-unseen-tools", 1, 2),
    ]
    # Every summary keeps its episodes' outcomes and the intervals over its tasks.
    assert [len(row["outcomes"]) for row in rows] == [2, 2]
    assert all(row["intervals"]["success"]["n"] == 1 for row in rows)
    table = out.with_suffix(".md").read_text()
    assert "| base | paraact | test-unseen-tools | 1 (2 episodes) |" in table


def test_sampling_seed_draws_other_samples_on_the_same_tasks(
    tiny_model: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from paraagent_runtime.trajectory import read_episodes
    from training.cli import train_app

    def draw(name: str, *seeds: str) -> list[tuple[str | None, str]]:
        path = tmp_path / f"{name}.jsonl"
        args = ["eval", "--model", str(tiny_model), "--n-tasks", "1", "--max-turns", "1"]
        args += ["--max-tokens", "8", "--samples", "2", "--temperature", "1.0", *seeds]
        result = CliRunner().invoke(train_app, [*args, "--trajectory", str(path)])
        assert result.exit_code == 0, result.output
        return [(e.task_id, e.turns[0].text) for e in read_episodes(path, strict=True)]

    first, again = draw("first", "--seed", "0"), draw("again", "--seed", "0")
    other = draw("other", "--seed", "0", "--sampling-seed", "1")
    assert first == again
    assert [task for task, _ in other] == [task for task, _ in first]
    assert [text for _, text in other] != [text for _, text in first]


def test_eval_command_pairs_each_adapter_with_its_mode(
    tiny_model: Path, tiny_adapter: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from training.cli import train_app

    other = tmp_path / "other-adapter"
    shutil.copytree(tiny_adapter, other)
    out = tmp_path / "modes.json"
    args = ["eval", "--model", str(tiny_model), "--n-tasks", "1", "--max-turns", "1"]
    args += ["--max-tokens", "4", "--policy", "local", "--mode", "react"]
    args += ["--policy", f"local:{tiny_adapter}", "--mode", "react"]
    args += ["--policy", f"local:{other}", "--mode", "decoupled"]
    result = CliRunner().invoke(train_app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [(row["model"], row["mode"]) for row in rows] == [
        ("base", "react"),
        (str(tiny_adapter), "react"),
        (str(other), "decoupled"),
    ]
    assert all(row["mean_sim_tools_s"] >= 0 for row in rows)


async def test_simulated_tool_time_is_the_mean_over_episodes(demo_build: DemoBuild) -> None:
    demo = demo_build.demos[0]
    task = {t.id: t for t in generate_tasks(36, seed=3)}[demo.task_id]
    turns = [m.content for m in demo.messages if m.role == "assistant"]
    summary, rows = await evaluate_policy(
        ScriptedPolicy(turns), [task], model="replay", mode="paraact"
    )
    assert rows[0].sim_tools_s > 0
    assert summary.mean_sim_tools_s == pytest.approx(rows[0].sim_tools_s, abs=1e-3)
    assert summary.mode == "paraact"


def test_eval_command_rejects_mismatched_modes(tiny_model: Path, tiny_adapter: Path) -> None:
    from typer.testing import CliRunner

    from training.cli import train_app

    args = ["eval", "--model", str(tiny_model), "--policy", f"local:{tiny_adapter}"]
    remote = CliRunner().invoke(train_app, ["eval", "--policy", "openai:m"])
    assert remote.exit_code == 2 and "runs local models" in remote.output
    for modes, message in ((["react", "paraact"], "one per --policy (1), got 2"),
                           (["serial"], "unknown serial")):  # fmt: skip
        flags = [flag for name in modes for flag in ("--mode", name)]
        result = CliRunner().invoke(train_app, [*args, *flags])
        assert result.exit_code == 2 and message in result.output, result.output
    greedy_repeats = CliRunner().invoke(train_app, [*args, "--samples", "3"])
    assert greedy_repeats.exit_code == 2 and "need a temperature" in greedy_repeats.output
    half = CliRunner().invoke(train_app, [*args, "--dtype", "float8"])
    assert half.exit_code == 2 and "dtype must be" in half.output, half.output


def test_eval_command_rejects_an_unknown_split(tiny_model: Path) -> None:
    from typer.testing import CliRunner

    from training.cli import train_app

    result = CliRunner().invoke(
        train_app, ["eval", "--model", str(tiny_model), "--split", "nope", "--n-tasks", "1"]
    )
    assert result.exit_code == 2 and "nope" in result.output


async def test_summaries_carry_intervals_and_per_task_outcomes() -> None:
    tasks = generate_tasks(3, seed=0, families=["city_pair_facts"])
    policy = ScriptedPolicy(["<answer>no idea</answer>"] * 3)
    summary, rows = await evaluate_policy(policy, tasks, model="guess")
    assert [row.task_id for row in summary.outcomes] == [task.id for task in tasks]
    assert summary.intervals["success"] == wilson(0, 3)
    assert summary.intervals["turns"].n == 3 and summary.mean_loaded_tools is not None
    cells = summary_cells(json.loads(json.dumps({**summary.model_dump(), "split": "train"})))
    assert cells[SUMMARY_COLUMNS.index("success [95% CI]")] == "0.00 [0.00, 0.56]"
    assert cells[SUMMARY_COLUMNS.index("turns")] == "1.00 [1.00, 1.00]"
    assert "95% intervals" in summaries_markdown([{**summary.model_dump(), "split": "train"}])


async def test_a_policy_runs_on_catalog_tasks_in_their_own_environments(tmp_path: Path) -> None:
    from mcp_servers.toolenv.catalog import build_catalog, google_source
    from mcp_servers.toolenv.catalog_tasks import (
        CatalogHoldout,
        catalog_task_env,
        generate_catalog_tasks,
    )

    google = google_source.default_path()
    assert google is not None
    (tmp_path / "tasks.v1.json").symlink_to(google / "tasks.v1.json")
    records = list(build_catalog({"google": tmp_path}, progress=False).records)
    nothing_held = CatalogHoldout(categories=frozenset(), providers=frozenset())
    tasks = generate_catalog_tasks(
        records, 2, split="dev", groups=["G1"], holdout=nothing_held, train_reference=2
    )
    policy = ScriptedPolicy(["<answer>no idea</answer>"] * 2)
    summary, rows = await evaluate_policy(
        policy,
        tasks,
        model="guess",
        env_factory=lambda task: catalog_task_env(task, records, distractors=4),
    )
    assert [row.task_id for row in rows] == [task.id for task in tasks]
    assert summary.success_rate == 0.0 and {row.family for row in rows} == {"catalog_g1"}

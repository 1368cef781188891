"""Default ``runs/`` paths: commands started in the same second get paths of their own."""

from __future__ import annotations

import time

from paraagent_runtime.cli import main
from paraagent_runtime.cli.run_paths import fresh_run_path


def test_two_commands_in_the_same_second_never_share_a_path(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time, "strftime", lambda _format: "20261204-001611")
    first = fresh_run_path("eval-toolenv", directory=True)
    second = fresh_run_path("eval-toolenv", directory=True)
    assert first.name == "eval-toolenv-20261204-001611" and first.is_dir()
    assert second.name == "eval-toolenv-20261204-001611-2" and second.is_dir()
    files = [fresh_run_path("trajectories", suffix=".jsonl") for _ in range(3)]
    assert [path.name for path in files] == [
        "trajectories-20261204-001611.jsonl",
        "trajectories-20261204-001611-2.jsonl",
        "trajectories-20261204-001611-3.jsonl",
    ]
    assert all(path.is_file() and path.stat().st_size == 0 for path in files)


def test_a_runs_that_is_a_file_gives_the_path_back_unclaimed(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").write_text("not a folder\n", encoding="utf-8")
    path = fresh_run_path("eval-toolenv", directory=True)
    assert path.parent.name == "runs" and path.name.startswith("eval-toolenv-")
    assert (tmp_path / "runs").read_text(encoding="utf-8") == "not a folder\n"


def test_an_evaluation_with_bad_options_claims_no_folder(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["eval", "toolenv", "--split", "dev", "--family", "meeting_followup", "-p", "oracle"]
    assert main(argv) == 2
    assert "meeting_followup" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_a_run_with_a_bad_policy_claims_no_trajectories_file(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "hi", "--toolenv", "-p", "nonsense:spec"]) == 2
    assert "nonsense" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_a_run_claims_its_trajectories_file_once_the_policy_loads(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "script.jsonl"
    script.write_text('{"text": "The answer is 4."}\n', encoding="utf-8")
    assert main(["run", "What is 2+2?", "-p", f"scripted:{script}"]) == 0
    (written,) = (tmp_path / "runs").glob("trajectories-*.jsonl")
    assert "The answer is 4." in written.read_text(encoding="utf-8")

from __future__ import annotations

from benchmarks import startup


def test_startup_benchmark_times_each_command_beside_bare_python() -> None:
    report = startup.run_benchmark(runs=1)
    commands = report["commands"]
    assert list(commands) == [
        "python -c pass",
        "paraagent --help",
        "paraagent run --help",
        "paraagent serve --help",
    ]
    assert commands["python -c pass"]["over_python"] == 1.0
    assert all(row["min_s"] <= row["median_s"] <= row["max_s"] for row in commands.values())

from __future__ import annotations

import pytest

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


@pytest.mark.slow
def test_first_listing_times_serve_beside_a_bare_sdk_server() -> None:
    report = startup.first_listing(runs=1)
    for name in ("bare MCP SDK server", "paraagent serve"):
        row = report[name]
        assert 0 < row["initialize_s"] <= row["tools_list_s"] <= row["max_tools_list_s"]
        assert row["server_cpu_s"] > 0
    assert report["bare MCP SDK server"]["cpu_over_bare_sdk"] == 1.0

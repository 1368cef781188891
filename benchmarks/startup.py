"""CLI start-up benchmark: wall time of ``paraagent --help`` and friends beside bare Python.

How long does a user wait for ``paraagent --help``, ``paraagent run --help`` and ``paraagent
serve --help``? Run ``python -m benchmarks.startup`` (``--runs N``, default 5). Each command is
run N times as a fresh process (the installed console script next to this interpreter), in
interleaved rounds together with ``python -c pass``, so a busy machine slows every command
alike; the report is each command's median wall time and its ratio to ``python -c pass``
(target: ``paraagent --help`` <= 0.3 s). Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

PARAAGENT = Path(sys.executable).with_name("paraagent")
TARGET_S = 0.3
COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "paraagent --help": [str(PARAAGENT), "--help"],
    "paraagent run --help": [str(PARAAGENT), "run", "--help"],
    "paraagent serve --help": [str(PARAAGENT), "serve", "--help"],
}


def _wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        command,
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    return time.perf_counter() - started


def run_benchmark(*, runs: int = 5) -> dict[str, Any]:
    """Time every command ``runs`` times in interleaved rounds; return the JSON-ready report."""
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # one warm-up each: the first run fills the OS cache
        _wall(command)
    for _ in range(runs):
        for name, command in COMMANDS.items():
            walls[name].append(_wall(command))
    baseline = statistics.median(walls["python -c pass"])
    return {
        "benchmark": "startup",
        "python": platform.python_version(),
        "runs": runs,
        "target_s": TARGET_S,
        "load_average": list(os.getloadavg()),
        "commands": {
            name: {
                "median_s": statistics.median(times),
                "min_s": min(times),
                "max_s": max(times),
                "over_python": statistics.median(times) / baseline,
            }
            for name, times in walls.items()
        },
    }


def _print_table(report: dict[str, Any], console: Console) -> None:
    table = Table(
        title=f"start-up, median of {report['runs']} runs (target <= {report['target_s']} s)"
    )
    for column in ("command", "median s", "min s", "max s", "× python -c pass"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for name, row in report["commands"].items():
        table.add_row(
            name,
            f"{row['median_s']:.3f}",
            f"{row['min_s']:.3f}",
            f"{row['max_s']:.3f}",
            f"{row['over_python']:.1f}",
        )
    console.print(table)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, run the benchmark, print JSON then a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (default 5)")
    args = parser.parse_args(argv)
    report = run_benchmark(runs=args.runs)
    print(json.dumps(report, indent=2))
    _print_table(report, Console())


if __name__ == "__main__":
    main()

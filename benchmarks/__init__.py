"""Performance benchmarks: `python -m benchmarks.<name>` prints JSON and a short table."""

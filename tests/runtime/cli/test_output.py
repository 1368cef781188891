"""Log levels, third-party bars and one-time notices (``paraagent_runtime.cli.output``)."""

from __future__ import annotations

import pytest

from .helpers import run_python

SCRIPT = """
import logging, os
from paraagent_runtime.cli.output import configure_output
for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE"):  # from an in-process test run
    os.environ.pop(name, None)
configure_output({verbosity})
configure_output({verbosity})  # twice, as in-process callers do: still one notice handler
logging.getLogger("paraagent_runtime.policy.ort_export").info("exporting m (fp32) (once)")
logging.getLogger("paraagent_runtime.search").info("tool index: 69 tools")
logging.getLogger("paraagent_runtime.search").debug("details")
print(os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS"), os.environ.get("TQDM_DISABLE"))
"""


def test_without_v_one_time_steps_are_notices_and_bars_are_off() -> None:
    result = run_python(SCRIPT.format(verbosity=0))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["notice: exporting m (fp32) (once)"]
    assert result.stdout.strip() == "1 1"


@pytest.mark.parametrize(("verbosity", "lines"), [(1, 2), (2, 3)])
def test_v_shows_info_and_vv_debug_logs_and_leaves_the_bars_on(verbosity: int, lines: int) -> None:
    result = run_python(SCRIPT.format(verbosity=verbosity))
    assert result.returncode == 0, result.stderr
    logged = result.stderr.splitlines()
    assert len(logged) == lines
    assert "INFO paraagent_runtime.policy.ort_export: exporting" in logged[0]
    assert not any(line.startswith("notice:") for line in logged)
    assert result.stdout.strip() == "None None"


@pytest.mark.parametrize(
    ("flags", "level"), [([], 30), (["-v"], 20), (["-vv"], 10), (["--debug"], 10)]
)
def test_the_flags_set_the_log_level(flags: list[str], level: int) -> None:
    code = (
        "import logging; from paraagent_runtime.cli import main\n"
        f"assert main([*{flags!r}, 'run']) == 2  # nothing to run, after the callback ran\n"
        "print(logging.getLogger().level)"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(level)

"""What the CLI prints besides results: log levels, third-party bars, one-time notices.

``-v`` shows progress logs (info) and third-party loading bars, ``-vv`` everything (debug).
Without ``-v`` the loading bars of transformers, huggingface_hub and tqdm are off, but the
one-time steps (exporting a model for ONNX Runtime GenAI, exporting the encoder, embedding a new
tool space into its index) still say what they do in one ``notice:`` line on stderr, since they
may take a minute.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

__all__ = [
    "DEMO_MODEL_NOTICE",
    "NOTICE_LOGGERS",
    "configure_output",
    "default_model_notice",
    "index_notice",
]

NOTICE_LOGGERS: tuple[str, ...] = (
    "paraagent_runtime.policy.ort_export",
    "paraagent_runtime.policy.smollm2",
    "paraagent_runtime.retrieval.onnx_backend",
)
"""Loggers whose info lines are one-time steps, shown as ``notice:`` lines without ``-v``."""

_QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # transformers' "Loading weights" follows this too
    "TQDM_DISABLE": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",  # datasets' map/filter bars (train sft)
    "TRANSFORMERS_VERBOSITY": "error",
}
_NOTICE_HANDLER = "paraagent.notice"

DEMO_MODEL_NOTICE = (
    "notice: the default policy is ParaAgent-135M, a small offline demo model; for real tasks "
    "plug a capable one: --policy openai:MODEL --base-url http://HOST:PORT/v1 (any "
    "OpenAI-compatible server, e.g. vLLM). Shown once."
)


def configure_output(verbosity: int) -> None:
    """Set the log level (0: warnings, 1: info, 2+: debug) and quiet third-party bars at 0.

    Args:
        verbosity: How many ``-v`` were given (``--debug`` counts as 2).
    """
    level = logging.DEBUG if verbosity >= 2 else logging.INFO if verbosity == 1 else logging.WARNING
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Some libraries (bm25s) set their own loggers to DEBUG; the handler level keeps them quiet.
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)
    if verbosity:
        return
    for name, value in _QUIET_ENV.items():
        os.environ.setdefault(name, value)
    for name in NOTICE_LOGGERS:
        logger = logging.getLogger(name)
        if not any(handler.get_name() == _NOTICE_HANDLER for handler in logger.handlers):
            handler = logging.StreamHandler(sys.stderr)
            handler.set_name(_NOTICE_HANDLER)
            handler.setLevel(logging.INFO)
            handler.setFormatter(logging.Formatter("notice: %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def default_model_notice(spec: str) -> str | None:
    """The one-line notice about the demo default, the first time ``spec`` is the default.

    A marker file in the paraagent cache (``$PARAAGENT_CACHE``, else ``~/.cache/paraagent``)
    remembers that it was shown; any other policy spec never shows it.

    Args:
        spec: The policy spec the command runs.
    """
    if spec != "paraagent":
        return None
    from ..policy.smollm2 import cache_root

    marker = cache_root() / "notices" / "default-model"
    if marker.exists():
        return None
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass  # a read-only cache shows the notice every time rather than failing the command
    return DEMO_MODEL_NOTICE


def index_notice(search: object) -> str | None:
    """The notice for a tool space whose index is built for the first time, else ``None``.

    Args:
        search: The tool search of the command; only a persisted index (one with an
            ``index_dir`` in its config) that is not on disk yet gets a notice.
    """
    index_dir = getattr(getattr(search, "config", None), "index_dir", None)
    if index_dir is None or Path(index_dir).exists():
        return None
    return (
        f"notice: first use of these tools: embedding them into a new tool index at {index_dir} "
        "(once; later runs reuse it)"
    )

"""ParaAgent-135M, in the package.

The project's cold-start LoRA adapter on SmolLM2-135M-Instruct.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PARAAGENT_ADAPTER", "PARAAGENT_MODEL_NAME"]

PARAAGENT_ADAPTER = Path(__file__).with_name("adapters") / "paraagent-135m"
PARAAGENT_MODEL_NAME = "paraagent-135m"

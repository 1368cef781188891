"""Calling a :data:`~paraagent_runtime.policy.base.TextCallback` that may be sync or async."""

from __future__ import annotations

import inspect

from .base import TextCallback


async def emit_text(on_text: TextCallback | None, text: str) -> None:
    """Send ``text`` to ``on_text``, awaiting it when it is async; a no-op without one."""
    if on_text is None or not text:
        return
    result = on_text(text)
    if inspect.isawaitable(result):
        await result

"""``/model SPEC``: the same policy specs as ``--policy``, loaded from this machine only.

The chat never downloads a model. A spec naming a model that is not on disk (``local:NAME``,
``transformers:NAME``, ``vllm:NAME`` for a hub id) is refused before anything is loaded; the only
spec that reaches the network is ``openai:MODEL``, and only the server the user configured.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from paraagent_runtime import Policy, UserError

__all__ = ["PolicyFactory", "default_policy_factory", "load_policy", "refuse_downloads"]

PolicyFactory = Callable[[str], Policy]
"""Builds a policy from a ``--policy`` spec (``paraagent``, ``local:DIR``, ``openai:MODEL``…)."""

_LOCAL_BACKENDS = frozenset({"local", "onnx", "transformers", "vllm"})
_SHIPPED_TARGETS = frozenset({"", "paraagent"})


def refuse_downloads(spec: str) -> None:
    """Refuse a spec whose model would have to come from the network.

    Raises:
        UserError: the spec names a local backend with a model that is not a directory here.
    """
    backend, _, target = spec.strip().partition(":")
    if backend.lower() not in _LOCAL_BACKENDS or target in _SHIPPED_TARGETS:
        return
    if not Path(target).expanduser().is_dir():
        raise UserError(
            f"/model {spec}: {target!r} is not a model directory on this machine, and the chat "
            "never downloads models. Use paraagent, local, local:DIR, or openai:MODEL with a "
            "server (--base-url or $OPENAI_BASE_URL)."
        )


def default_policy_factory(spec: str) -> Policy:
    """:func:`~paraagent_runtime.policy.policy_from_spec` (``$OPENAI_BASE_URL`` for ``openai:``)."""
    from paraagent_runtime.policy import policy_from_spec

    return policy_from_spec(spec)


async def load_policy(
    factory: PolicyFactory, spec: str, *, on_load: Callable[[str], None] | None = None
) -> Policy:
    """Build the policy of ``spec`` off the event loop and load its weights now.

    Loading now (not at the first task) puts a missing file or a broken model in the ``/model``
    answer rather than in a later task's failure.

    Args:
        factory: builds the policy from the spec.
        spec: a ``--policy`` spec.
        on_load: told the spec just before its weights load (the step that takes a while).

    Raises:
        UserError: the spec would download a model.
        ParaAgentError: the spec is invalid or its model cannot be loaded.
    """
    refuse_downloads(spec)
    policy = await asyncio.to_thread(factory, spec)
    load = getattr(policy, "load", None)
    if callable(load):
        if on_load is not None:
            on_load(spec)
        try:
            await asyncio.to_thread(load)
        except BaseException:
            await policy.aclose()
            raise
    return policy

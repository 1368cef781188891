"""``paraagent serve-model``: a policy behind an OpenAI-compatible chat-completions API."""

from __future__ import annotations

from typing import Annotated

import typer

from . import options

__all__ = ["serve_model_command"]


def serve_model_command(
    policy: Annotated[
        str,
        options.policy(
            'Policy spec: "paraagent", "local[:DIR]" (a model or LoRA adapter directory), '
            '"vllm:MODEL", "scripted:FILE.jsonl".'
        ),
    ] = "paraagent",
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")
    ] = 8000,
    name: Annotated[
        str | None, typer.Option("--name", help="Served model name (default: from the model).")
    ] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="cpu, cuda, cuda:1… (local models).")
    ] = None,
) -> None:
    """Serve a policy over an OpenAI-compatible chat-completions API (stops on Ctrl-C)."""
    import asyncio

    from ..errors import ConfigError
    from ..policy import policy_from_spec
    from ..policy.server import serve

    if device is not None and not policy.startswith(("local", "paraagent")):
        raise ConfigError(f"--device applies to local models only, not {policy!r}")
    model = policy_from_spec(policy, **({"device": device} if device is not None else {}))
    asyncio.run(serve(model, host, port, model_name=name))

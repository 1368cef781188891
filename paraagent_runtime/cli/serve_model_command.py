"""``paraagent serve-model``: a policy behind an OpenAI-compatible chat-completions API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from . import options

if TYPE_CHECKING:
    from ..policy.server import ModelServer

__all__ = ["serve_model_command"]


def _announce(server: ModelServer) -> None:
    typer.echo(f"{server.announcement()}\nCtrl-C stops.", err=True)


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
        str | None,
        typer.Option(
            "--name",
            help="Served model name (default: from the model). Requests may also name the "
            "--policy spec; any other model name gets a 404.",
        ),
    ] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="cpu, cuda, cuda:1… (local models).")
    ] = None,
) -> None:
    """Serve a policy over an OpenAI-compatible chat-completions API (stops on Ctrl-C).

    A local model loads first; then it prints the served model name, the address and the routes
    on stderr.
    """
    import asyncio

    from ..errors import ConfigError
    from ..policy import policy_from_spec
    from ..policy.server import serve

    if device is not None and not policy.startswith(("local", "paraagent")):
        raise ConfigError(f"--device applies to local models only, not {policy!r}")
    model = policy_from_spec(policy, **({"device": device} if device is not None else {}))
    # A local model loads (and exports, the first time) before the port opens: a broken model
    # fails here in one line, and the first request does not wait for it.
    if callable(load := getattr(model, "load", None)):
        typer.echo(f"loading {policy}…", err=True)
        load()
    asyncio.run(serve(model, host, port, model_name=name, aliases=[policy], on_ready=_announce))

"""``paraagent serve-model`` as a user starts it: it announces itself and refuses other models."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess

import aiohttp

from .helpers import PARAAGENT, default_sigint, run_cli

MESSAGES = [{"role": "user", "content": "hi"}]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _post(url: str, model: str) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json={"model": model, "messages": MESSAGES}) as response:
            return response.status, await response.json()


async def test_serve_model_announces_itself_and_refuses_another_model(tmp_path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps("<answer>one</answer>") + "\n", encoding="utf-8")
    spec, port = f"scripted:{script}", _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(
        [str(PARAAGENT), "serve-model", "-p", spec, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_sigint,
    )
    try:
        assert child.stderr is not None
        announced = [child.stderr.readline() for _ in range(3)]
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        refused = await _post(url, "gpt-4o")
        served = await _post(url, spec)
        child.send_signal(signal.SIGINT)
        _, rest = child.communicate(timeout=30)
    finally:
        child.kill()  # only if it did not stop on its own
    assert announced == [
        f"serving model 'scripted' (also accepted as '{spec}') at http://127.0.0.1:{port}/v1 "
        "(OpenAI-compatible; other model names get a 404)\n",
        f"routes: POST http://127.0.0.1:{port}/v1/chat/completions, "
        f"GET http://127.0.0.1:{port}/v1/models, GET http://127.0.0.1:{port}/health\n",
        "Ctrl-C stops.\n",
    ]
    assert refused[0] == 404 and refused[1]["error"]["code"] == "model_not_found"
    assert (
        served[0] == 200 and served[1]["choices"][0]["message"]["content"] == "<answer>one</answer>"
    )
    assert child.returncode == 130 and "Traceback" not in rest


def test_a_model_that_does_not_load_stops_serve_model_before_it_listens(tmp_path) -> None:
    result = run_cli("serve-model", "-p", f"local:{tmp_path / 'missing'}", "--port", "8")
    assert result.returncode == 2
    loading, error = result.stderr.strip().splitlines()
    assert loading == f"loading local:{tmp_path / 'missing'}…"
    assert error.startswith("error: cannot load the model from ")
    assert "serving model" not in result.stderr

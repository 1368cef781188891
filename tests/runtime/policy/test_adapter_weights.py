"""An adapter directory without weights fails at once, naming how to restore archived ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paraagent_runtime import ConfigError
from paraagent_runtime.policy import TransformersPolicy
from paraagent_runtime.policy.adapter_weights import ARCHIVE_NOTE, check_adapter_weights

from ..cli.helpers import run_cli

COMMIT = "d02236955040be3299d9c424974b872c349c7063"


def _adapter_dir(root: Path, *, weights: bool, note: str | None = None) -> Path:
    adapter = root / "kept"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA"}))
    if weights:
        (adapter / "adapter_model.safetensors").write_bytes(b"\0")
    if note is not None:
        (adapter / ARCHIVE_NOTE).write_text(note)
    return adapter


def test_an_adapter_with_weights_passes(tmp_path: Path) -> None:
    check_adapter_weights(_adapter_dir(tmp_path, weights=True, note=f"{COMMIT}\n"))


def test_an_archived_adapter_names_the_restore_command(tmp_path: Path) -> None:
    adapter = _adapter_dir(tmp_path, weights=False, note=f"{COMMIT}\n")
    with pytest.raises(ConfigError) as raised:
        check_adapter_weights(adapter)
    assert str(raised.value).endswith(
        f"restore them with `git restore --source={COMMIT} -- "
        f"{adapter / 'adapter_model.safetensors'}`"
    )


@pytest.mark.parametrize("note", [None, "", "\n"], ids=["no note", "empty note", "blank note"])
def test_missing_weights_without_a_commit_name_the_files_looked_for(
    tmp_path: Path, note: str | None
) -> None:
    with pytest.raises(ConfigError, match="holds no weights .no adapter_model.safetensors or "):
        check_adapter_weights(_adapter_dir(tmp_path, weights=False, note=note))


def test_a_local_policy_refuses_it_before_loading_any_model(tmp_path: Path) -> None:
    adapter = _adapter_dir(tmp_path, weights=False, note=COMMIT)
    with pytest.raises(ConfigError, match="archived in git history"):
        TransformersPolicy(tmp_path / "no-such-model", adapter=adapter)


def test_the_cli_says_it_in_one_line(tmp_path: Path) -> None:
    adapter = _adapter_dir(tmp_path, weights=False, note=COMMIT)
    (tmp_path / "cache" / "notices").mkdir(parents=True)
    (tmp_path / "cache" / "notices" / "default-model").touch()
    result = run_cli(
        "run", "-p", f"local:{adapter}", "x", env={"PARAAGENT_CACHE": str(tmp_path / "cache")}
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: the weights of the adapter {adapter} are archived in git history; restore them "
        f"with `git restore --source={COMMIT} -- {adapter / 'adapter_model.safetensors'}`"
    ]

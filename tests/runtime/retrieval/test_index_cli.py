"""``paraagent index build|search`` and ``eval retrieval --distractors`` through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from paraagent_runtime.cli import main
from paraagent_runtime.cli.eval_retrieval import eval_retrieval_index_dir
from paraagent_runtime.cli.tool_catalogs import read_tool_specs, resolve_catalog
from paraagent_runtime.errors import ConfigError, UserError
from paraagent_runtime.tools import ToolSpec

Cli = Callable[[list[str]], int]


@pytest.fixture(scope="module")
def cli() -> Cli:
    """``paraagent_runtime.cli.main``, which mounts ``index`` and ``eval retrieval``."""
    return main


@pytest.fixture(scope="module")
def built(cli, tmp_path_factory) -> tuple[Path, int]:
    """An index root holding the built-in catalog's index, and the build's exit code."""
    root = tmp_path_factory.mktemp("index-root")
    return root, cli(["index", "build", "--catalog", "builtin", "--index-dir", str(root)])


def _one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured.err
    return lines[0]


def test_build_persists_embeddings_under_the_catalog_label(built, capsys) -> None:
    root, code = built
    assert code == 0
    files = sorted(path.suffix for path in (root / "builtin").glob("tool-index-*"))
    assert files == [".json", ".npz"]
    manifest = json.loads(next((root / "builtin").glob("tool-index-*.json")).read_text())
    assert manifest["rows"] == len(resolve_catalog("builtin").tools) == 69


def test_rebuild_reuses_every_embedding(built, cli, capsys) -> None:
    root, _ = built
    capsys.readouterr()
    assert cli(["index", "build", "--catalog", "builtin", "--index-dir", str(root)]) == 0
    out = capsys.readouterr().out
    assert "indexed 69 tools of catalog 'builtin'" in out
    assert "embedded 0, reused 69" in out


@pytest.mark.parametrize(
    ("query", "mode", "expected"),
    [
        ("will it rain in Paris tomorrow", "hybrid", "weather/"),
        ("convert 100 US dollars to euros", "dense", "currency/"),
        ("send an email", "bm25", "email/send_email"),
    ],
)
def test_search_prints_the_relevant_tool_first(built, cli, capsys, query, mode, expected) -> None:
    root, _ = built
    capsys.readouterr()
    code = cli(["index", "search", query, "--retriever", mode, "-k", "3", "--index-dir", str(root)])
    assert code == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│ 1 ")]
    assert len(rows) == 1 and expected in rows[0]


def test_search_over_a_jsonl_catalog(cli, tmp_path, capsys) -> None:
    tools = [
        ToolSpec(id="zoo/feed_penguins", description="Schedule feeding time for the penguins."),
        ToolSpec(id="zoo/book_tickets", description="Buy entrance tickets to the zoo."),
        ToolSpec(id="bank/open_account", description="Open a new savings account."),
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("\n".join(tool.model_dump_json() for tool in tools) + "\n\n")
    root = str(tmp_path / "idx")
    assert cli(["index", "build", "--catalog", str(path), "--index-dir", root]) == 0
    capsys.readouterr()
    argv = ["index", "search", "penguin food", "--catalog", str(path), "--index-dir", root]
    assert cli(argv) == 0
    out = capsys.readouterr().out
    assert "zoo/feed_penguins" in out.split("│ 1 ")[1].splitlines()[0]
    assert len(list((tmp_path / "idx").glob("file-tools-*/tool-index-*.npz"))) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["index", "build", "--catalog", "nosuch"], "unknown catalog 'nosuch'"),
        (["index", "search", "weather", "--catalog", "nosuch.jsonl"], "unknown catalog"),
        (["index", "search", "   "], "empty query"),
        (["index", "search", ""], "empty query"),
        (["index", "search", "weather", "-r", "fuzzy"], "'fuzzy' is not one of 'bm25'"),
        (["index", "search", "weather", "--top-k", "0"], "'--top-k' / '-k'"),
        (["eval", "retrieval", "--distractors", "nosuch"], "unknown catalog 'nosuch'"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(cli, capsys, tmp_path, argv, message) -> None:
    assert cli([*argv, "--index-dir", str(tmp_path)]) == 2
    assert message in _one_line_error(capsys)


def test_search_without_a_built_index_says_how_to_build(cli, capsys, tmp_path) -> None:
    assert cli(["index", "search", "weather", "--index-dir", str(tmp_path)]) == 2
    line = _one_line_error(capsys)
    assert "no index for catalog 'builtin'" in line and "paraagent index build" in line
    assert not (tmp_path / "builtin").exists()


def test_bad_jsonl_catalogs_are_config_errors(cli, capsys, tmp_path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a/b"}\n{"id": "a/c", "description": 3}\n')
    with pytest.raises(ConfigError, match="no tools"):
        read_tool_specs(empty)
    with pytest.raises(ConfigError, match=r"broken.jsonl:2: description: Input should be a valid"):
        read_tool_specs(broken)
    assert cli(["index", "build", "--catalog", str(broken), "--index-dir", str(tmp_path)]) == 2
    assert "broken.jsonl:2" in _one_line_error(capsys)


def test_catalog_names_resolve() -> None:
    assert resolve_catalog("builtin").label == "builtin"
    with pytest.raises(UserError, match="unknown catalog"):
        resolve_catalog("toolenv.json")


@pytest.mark.slow
def test_eval_retrieval_adds_distractors_and_persists_per_pool(
    cli, capsys, tmp_path, tiny_bench
) -> None:
    out = tmp_path / "out"
    argv = ["eval", "retrieval", "--data", str(tiny_bench.parent), "--out", str(out)]
    argv += ["--sets", "stabletoolbench", "--distractors", "builtin"]
    assert cli([*argv, "--index-dir", str(tmp_path / "idx")]) == 0
    report = json.loads((out / "retrieval_eval.json").read_text())
    assert report["pools"] == {"stabletoolbench": 4 + 69}
    assert 0.0 <= report["scores"]["test"]["all"]["all"]["coverage"]["ndcg@5"] <= 1.0
    stored = eval_retrieval_index_dir(tmp_path / "idx", "builtin")
    assert stored.name == "eval-stabletoolbench-builtin"
    assert len(list(stored.glob("tool-index-*.npz"))) == 1
    assert "'stabletoolbench': 73" in capsys.readouterr().out


def test_search_after_the_catalog_changed_re_embeds_instead_of_serving_stale_vectors(
    cli, tmp_path, capsys
) -> None:
    path = tmp_path / "tools.jsonl"
    old = ToolSpec(id="zoo/feed_penguins", description="Schedule feeding time for the penguins.")
    other = ToolSpec(id="bank/open_account", description="Open a new savings account.")
    path.write_text("\n".join(tool.model_dump_json() for tool in (old, other)))
    root = str(tmp_path / "idx")
    assert cli(["index", "build", "--catalog", str(path), "--index-dir", root]) == 0
    changed = ToolSpec(id="zoo/feed_penguins", description="Order violin strings and rosin.")
    path.write_text("\n".join(tool.model_dump_json() for tool in (changed, other)))
    capsys.readouterr()
    argv = ["index", "search", "violin strings", "--catalog", str(path), "--index-dir", root]
    assert cli([*argv, "--retriever", "dense"]) == 0
    first = capsys.readouterr().out.split("│ 1 ")[1].splitlines()[0]
    cells = [cell.strip() for cell in first.split("│")]
    assert cells[1] == "zoo/feed_penguins"
    assert float(cells[2]) > 0.25  # cosine to the new text (~0.45); the stale vector gives ~0


def test_encoder_name_matches_the_loaded_encoder(tmp_path) -> None:
    from paraagent_runtime.retrieval import DEFAULT_MODEL_NAME, encoder_name

    assert encoder_name(None) == encoder_name(DEFAULT_MODEL_NAME)
    assert encoder_name(None).partition("@")[0] == DEFAULT_MODEL_NAME
    assert encoder_name(tmp_path / "." / "model") == str((tmp_path / "model").resolve())


class _Interrupted(Exception):
    """Stands in for Ctrl-C in the middle of a build."""


async def test_an_interrupted_build_resumes_from_its_last_checkpoint(tmp_path) -> None:
    from paraagent_runtime.cli.index_command import build_index
    from paraagent_runtime.cli.tool_catalogs import ToolCatalog

    tools = [
        ToolSpec(id=f"shop/tool_{i}", description=f"Shop operation number {i}: {word}.")
        for i, word in enumerate(("refund", "invoice", "shipping", "coupon", "stock"))
    ]
    catalog = ToolCatalog("shop", tools)
    seen: list[tuple[int, int]] = []

    def stop_after_two(done: int, total: int) -> None:
        seen.append((done, total))
        if done == 2:
            raise _Interrupted

    with pytest.raises(_Interrupted):
        await build_index(
            catalog, index_dir=tmp_path, checkpoint_every=1, on_checkpoint=stop_after_two
        )
    assert seen == [(0, 5), (1, 5), (2, 5)]
    summary = await build_index(catalog, index_dir=tmp_path, checkpoint_every=2)
    assert (summary.tools, summary.embedded, summary.reused) == (5, 3, 2)
    with pytest.raises(UserError, match="checkpoint_every"):
        await build_index(catalog, index_dir=tmp_path, checkpoint_every=0)

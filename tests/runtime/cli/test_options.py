"""One flag, one meaning: the shared options are spelled the same in every command."""

from __future__ import annotations

from collections.abc import Iterator

import typer
from typer._click import Command, Context

from paraagent_runtime.cli import app, main, options

# The canonical spelling of each shared option: its long flag and its short one (if any).
CANONICAL = {
    "--policy": "-p",
    "--base-url": None,
    "--mode": "-m",
    "--max-turns": None,
    "--max-tokens": None,
    "--temperature": None,
    "--n-tasks": None,
    "--seed": None,
    "--out": "-o",
}
RETIRED = {"--n", "--trajectory-file", "--output", "--adapter-dir"}


def _commands(command: Command, ctx: Context, path: str) -> Iterator[tuple[str, Command]]:
    yield path, command
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            yield from _commands(sub, Context(sub, parent=ctx, info_name=name), f"{path} {name}")


def _every_option() -> list[tuple[str, list[str]]]:
    root = typer.main.get_command(app)
    return [
        (path, [*param.opts, *param.secondary_opts])
        for path, command in _commands(root, Context(root, info_name="paraagent"), "paraagent")
        for param in command.params
        if param.param_type_name == "option"
    ]


def test_shared_flags_keep_their_short_form_everywhere() -> None:
    found = _every_option()
    assert len({path for path, _ in found}) >= 18
    for path, flags in found:
        for long, short in CANONICAL.items():
            if long in flags:
                assert set(flags) == {long, *([short] if short else [])}, (path, flags)
        for short in filter(None, CANONICAL.values()):
            if short in flags:
                assert CANONICAL.get(next(f for f in flags if f.startswith("--"))) == short, (
                    path,
                    flags,
                )
        assert not RETIRED & set(flags), (path, flags)


def test_a_short_flag_means_one_long_flag() -> None:
    meanings: dict[str, set[str]] = {}
    for _, flags in _every_option():
        long = next(flag for flag in flags if flag.startswith("--"))
        for short in (flag for flag in flags if not flag.startswith("--")):
            meanings.setdefault(short, set()).add(long)
    assert {short: longs for short, longs in meanings.items() if len(longs) > 1} == {}


def test_modes_are_a_choice_of_the_runtime_modes() -> None:
    from paraagent_runtime.modes import DEFAULT_MODE, MODES

    assert [member.value for member in options.ModeChoice] == list(MODES)
    assert options.DEFAULT_MODE == DEFAULT_MODE


def test_ctrl_c_exits_130(monkeypatch) -> None:
    from paraagent_runtime.cli import run_command

    async def interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_command, "run_tasks", interrupted)
    assert main(["run", "x"]) == 130

"""One flag, one meaning: the shared options live in ``options.py`` and every command uses them."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

import typer
from typer._click import Command, Context

from paraagent_runtime.cli import app, main, options

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("paraagent_runtime", "mcp_servers", "training", "tui", "benchmarks")


def _canonical() -> dict[str, str | None]:
    """Each shared option's long flag and its short one (if any), as ``options.py`` spells them."""
    spelled: dict[str, str | None] = {}
    for name in options.__all__:
        function = getattr(options, name)
        # Flag functions take only their help text (dispatch_limits builds a config instead).
        if inspect.isfunction(function) and list(inspect.signature(function).parameters) == [
            "help"
        ]:
            # In an ``Annotated`` option typer reads the first flag from ``default``.
            info = function("help")
            spelled[info.default] = next(iter(info.param_decls), None)
    return spelled


CANONICAL = _canonical()
RETIRED = {"--n", "--trajectory-file", "--output", "--adapter-dir"}


def _own_spellings(source: str) -> list[tuple[int, str]]:
    """The shared flags a module's ``typer.Option(...)`` calls spell themselves, with their line.

    An option's flag is its first string argument, or (with none) its parameter's name.
    """
    tree = ast.parse(source)

    def is_option(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "Option")
            or (isinstance(node.func, ast.Name) and node.func.id == "Option")
        )

    def flags(call: ast.Call) -> list[str]:
        return [
            arg.value
            for arg in call.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]

    found = [
        (node.lineno, flag)
        for node in ast.walk(tree)
        if is_option(node)
        for flag in flags(node)
        if flag in CANONICAL or flag in CANONICAL.values()
    ]
    found += [
        (argument.lineno, implicit)
        for argument in ast.walk(tree)
        if isinstance(argument, ast.arg) and argument.annotation is not None
        for implicit in ["--" + argument.arg.replace("_", "-")]
        if implicit in CANONICAL
        and any(is_option(node) and not flags(node) for node in ast.walk(argument.annotation))
    ]
    return sorted(found)


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


def test_options_py_is_the_one_home_of_the_shared_flags() -> None:
    home = ROOT / "paraagent_runtime" / "cli" / "options.py"
    modules = [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]
    assert home in modules and len(modules) > 100
    spelled = {
        f"{path.relative_to(ROOT)}:{line}": flag
        for path in modules
        if path != home
        for line, flag in _own_spellings(path.read_text(encoding="utf-8"))
    }
    assert spelled == {}


def test_the_scan_sees_a_flag_spelled_by_hand() -> None:
    source = (
        "def command(\n"
        '    out: Annotated[Path, typer.Option("--out", "-o", help="x")],\n'
        '    seed: Annotated[int, typer.Option(help="x")] = 0,\n'
        '    mode: Annotated[str, options.mode("x")] = "sequential",\n'
        '    catalog: Annotated[str, typer.Option(help="x")] = "builtin",\n'
        "): ...\n"
    )
    assert _own_spellings(source) == [(2, "--out"), (2, "-o"), (3, "--seed")]


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


def test_no_help_shows_a_bool_metavar() -> None:
    root = typer.main.get_command(app)
    helps = {
        path: command.get_help(Context(command, info_name=path.rsplit(" ", 1)[-1]))
        for path, command in _commands(root, Context(root, info_name="paraagent"), "paraagent")
    }
    assert len(helps) >= 18
    assert {path for path, text in helps.items() if "<bool>" in text} == set()
    assert all("--help" in text for text in helps.values())

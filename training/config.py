"""Config plumbing shared by every training stage: dataclass fields with help, YAML/JSON files.

Each stage's config is a dataclass in the TRL style: every field carries ``metadata={"help": …}``
(shown by ``paraagent train … --help``) and ``__post_init__`` validates values and raises
:class:`~paraagent_runtime.errors.ConfigError` with a message that names the field and the fix.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from paraagent_runtime import ConfigError, Task, refuse_test_split

__all__ = [
    "config_to_dict",
    "describe_fields",
    "load_config",
    "option",
    "parse_assignments",
    "refuse_test_tasks",
    "save_config",
]

C = TypeVar("C")


def option(default: Any = dataclasses.MISSING, *, help: str, factory: Any = None) -> Any:  # noqa: A002
    """A dataclass field with a help text (``factory`` for mutable defaults)."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={"help": help})
    return dataclasses.field(default=default, metadata={"help": help})


def describe_fields(cls: type) -> list[tuple[str, str, str]]:
    """``(name, default, help)`` for every field of a config dataclass, in order."""
    rows = []
    for item in dataclasses.fields(cls):
        if item.default is not dataclasses.MISSING:
            default = repr(item.default)
        elif item.default_factory is not dataclasses.MISSING:
            default = repr(item.default_factory())
        else:
            default = "(required)"
        rows.append((item.name, default, item.metadata.get("help", "")))
    return rows


def _read_mapping(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    import yaml

    try:
        data = (
            yaml.safe_load(text) if path.suffix.lower() in (".yaml", ".yml") else json.loads(text)
        )
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot parse the config ({str(exc).splitlines()[0]})") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the config must be a mapping of field: value, got {type(data).__name__}"
        )
    return data


def _coerce(hint: Any, value: Any, name: str) -> Any:
    """Accept plain YAML/JSON values for tuple-, Path-, number- and dataclass-typed fields.

    PyYAML reads ``1e-4`` (no dot) and every ``--set`` value given as text as a string; a field
    typed as a number takes it as that number, and anything else is named in the error.
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if value is None or len(args) != 1:
            return value
        hint, origin = args[0], typing.get_origin(args[0])
    if origin is tuple and isinstance(value, list):
        return tuple(value)
    if hint is Path and isinstance(value, str):
        return Path(value)
    if hint in (int, float) and isinstance(value, str):
        try:
            return hint(value)
        except ValueError:
            raise ConfigError(
                f"{name}: expected {'an integer' if hint is int else 'a number'}, got {value!r}"
            ) from None
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        hints = typing.get_type_hints(hint)
        return {key: _coerce(hints.get(key), item, f"{name}.{key}") for key, item in value.items()}
    return value


def parse_assignments(
    assignments: Sequence[str], into: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Merge ``FIELD=VALUE`` strings (``--set``) into a nested mapping (a new one by default).

    VALUE is read as YAML (``true``, ``[a, b]``, ``1.0e-4``); a dotted FIELD such as
    ``advantage.alpha`` sets a field of a nested config and keeps that mapping's other fields.

    Raises:
        ConfigError: an assignment has no ``=`` or an empty field name, or a dotted FIELD goes
            through a value that is not a mapping.
    """
    import yaml

    merged: dict[str, Any] = {} if into is None else into
    for assignment in assignments:
        field, sep, text = assignment.partition("=")
        path = field.strip().split(".")
        if not sep or not all(path):
            raise ConfigError(f"--set {assignment!r}: use FIELD=VALUE (FIELD may be dotted)")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = text
        _merge(merged, path, value)
    return merged


def _merge(data: dict[str, Any], path: Sequence[str], value: Any) -> None:
    """Set ``data[path[0]][path[1]]… = value``, merging into mappings already there."""
    head, *rest = path
    if not rest:
        if isinstance(value, dict) and isinstance(data.get(head), dict):
            for key, item in value.items():
                _merge(data[head], [key], item)
        else:
            data[head] = value
        return
    inner = data.setdefault(head, {})
    if not isinstance(inner, dict):
        raise ConfigError(f"--set {'.'.join(path)}: {head} is {inner!r}, not a mapping of fields")
    _merge(inner, rest, value)


def load_config(
    cls: type[C],
    path: str | os.PathLike[str] | None = None,
    *,
    assignments: Sequence[str] = (),
    **overrides: Any,
) -> C:
    """Build ``cls`` from a YAML/JSON file, ``--set`` assignments, then keyword overrides.

    Later sources win: the file, then ``assignments`` (``FIELD=VALUE``, see
    :func:`parse_assignments`), then ``overrides`` (``None`` overrides are ignored).

    Raises:
        ConfigError: the file is missing or unparseable, names a field ``cls`` does not have
            (with the list of known fields), an assignment is malformed, or a value fails
            validation.
    """
    data: dict[str, Any] = _read_mapping(Path(path)) if path is not None else {}
    parse_assignments(assignments, into=data)
    data.update({key: value for key, value in overrides.items() if value is not None})
    names = {item.name for item in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        where = f"{path}: " if path is not None else ""
        raise ConfigError(
            f"{where}unknown field(s) {', '.join(unknown)} for {cls.__name__}; "
            f"known fields: {', '.join(sorted(names))}"
        )
    hints = typing.get_type_hints(cls)
    values = {
        key: _coerce(hints.get(key), value, f"{cls.__name__}.{key}") for key, value in data.items()
    }
    try:
        return cls(**values)
    except TypeError as exc:
        raise ConfigError(f"{cls.__name__}: {exc}") from exc


def refuse_test_tasks(tasks: Iterable[Task], *, owner: str) -> list[Task]:
    """``tasks`` as a list, unless one is from a test split (training never sees those).

    A tasks file may hold tasks of any split, so a stage that trains on one checks each task's
    own label, not only the split it was asked for.

    Raises:
        ConfigError: a task's split is one of :data:`~paraagent_runtime.tasks.TEST_SPLITS`
            (the message names ``owner`` and the task).
    """
    kept = list(tasks)
    for task in kept:
        refuse_test_split(task.split, owner=f"{owner} (task {task.id})")
    return kept


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of a config dataclass (paths and tuples become strings and lists)."""
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


def save_config(config: Any, path: str | os.PathLike[str]) -> Path:
    """Write a config dataclass as JSON (or YAML when ``path`` ends in .yaml/.yml)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = config_to_dict(config)
    if target.suffix.lower() in (".yaml", ".yml"):
        import yaml

        target.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    else:
        target.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return target

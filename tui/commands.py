"""Slash commands typed in the prompt: their names, help lines and parsing."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from paraagent_runtime import MODES, UserError
from paraagent_runtime.policy import SPEC_PREFIXES

__all__ = ["SLASH_COMMANDS", "SlashCommand", "help_markdown", "parse_slash", "table_cell"]

SLASH_COMMANDS: dict[str, tuple[str, str]] = {
    "tools": ("[query]", "search the tools (all tools by source without a query)"),
    "servers": ("", "list the tool sources, their tool counts and status"),
    "mode": ("|".join(MODES), "show or switch the agent mode"),
    "model": (
        "[spec]",
        "show the model, or switch to the one of a --policy spec: " + ", ".join(SPEC_PREFIXES),
    ),
    "clear": ("", "clear the screen and start a new conversation"),
    "save": ("[path]", "export the conversation as JSONL (shows its history file without a path)"),
    "load": ("[path|name]", "resume a conversation (the latest one without an argument)"),
    "history": ("", "list saved conversations"),
    "help": ("", "show commands and keys"),
}


@dataclass(frozen=True)
class SlashCommand:
    """A parsed slash command: its name and the rest of the line."""

    name: str
    argument: str = ""


def parse_slash(text: str) -> SlashCommand:
    """Parse ``/name argument``.

    Raises:
        UserError: the command is unknown (with the closest names).
    """
    head, _, argument = text.strip().removeprefix("/").partition(" ")
    name = head.lower()
    if name not in SLASH_COMMANDS:
        close = difflib.get_close_matches(name, SLASH_COMMANDS, n=2, cutoff=0.5)
        hint = f" Did you mean /{' or /'.join(close)}?" if close else " Type /help for the list."
        raise UserError(f"unknown command /{name or '?'}.{hint}")
    return SlashCommand(name=name, argument=argument.strip())


def table_cell(text: str) -> str:
    """Text as a Markdown table cell: a ``|`` must not split the row, nor ``<x>`` become HTML."""
    return text.replace("|", "\\|").replace("<", "\\<")


def _code_cell(text: str) -> str:
    # Inside a code span a backslash escapes nothing but the table's own ``|``.
    return "`" + text.replace("|", "\\|") + "`"


def help_markdown(bindings: list[tuple[str, str]]) -> str:
    """The ``/help`` text: slash commands, then key bindings."""
    lines = ["**Commands**", "", "| command | what it does |", "|---|---|"]
    for name, (usage, what) in SLASH_COMMANDS.items():
        lines.append(f"| {_code_cell(f'/{name} {usage}'.strip())} | {table_cell(what)} |")
    lines += ["", "**Keys**", "", "| key | action |", "|---|---|"]
    lines += [f"| {_code_cell(key)} | {table_cell(what)} |" for key, what in bindings]
    return "\n".join(lines)

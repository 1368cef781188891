"""Modal dialogs: approving a destructive call, and answering a server's elicitation."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static
from textual.widgets.button import ButtonVariant

from paraagent_runtime.mcp import ElicitationRequest, ElicitationResponse

from ..approval import ApprovalDecision, ApprovalRequest

__all__ = ["ApprovalScreen", "ElicitationScreen"]


_APPROVAL_BUTTONS: list[tuple[Binding, str, ButtonVariant]] = [
    (Binding("o", "decide('once')", "Allow once"), "once", "primary"),
    (Binding("s", "decide('session')", "This session"), "session", "default"),
    (Binding("a", "decide('always')", "Always"), "always", "default"),
    (Binding("d,escape", "deny", "Deny"), "deny", "error"),
]
"""Each decision's key binding and its button (labelled with the key), in button order."""


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """Asks whether a destructive call may run: once, for this session, always, or not at all."""

    BINDINGS = [binding for binding, _, _ in _APPROVAL_BUTTONS]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(classes="dialog-screen")
        self.request = request

    def compose(self) -> ComposeResult:
        """The tool, its arguments, the scope switch and the buttons."""
        spec = self.request.spec
        arguments = json.dumps(self.request.arguments, ensure_ascii=False, indent=2, default=str)
        with Vertical(classes="dialog approval"):
            yield Label(Text.assemble(("⚠ Allow a destructive tool?", "bold yellow")))
            yield Static(Text.assemble((spec.name, "bold"), ("  from ", "dim"), spec.source))
            if spec.description:
                yield Static(Text(spec.description, style="dim"))
            with VerticalScroll(classes="dialog-arguments"):
                yield Static(Text(arguments))
            yield Checkbox(f"apply to every tool of {spec.source!r}", id="whole-source")
            with Horizontal(classes="dialog-buttons"):
                for binding, button_id, variant in _APPROVAL_BUTTONS:
                    label = f"{binding.description} ({binding.key.split(',')[0]})"
                    yield Button(label, id=button_id, variant=variant)

    def on_mount(self) -> None:
        """Focus Deny, the safe default."""
        self.query_one("#deny", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Dismiss with the pressed button's decision."""
        if event.button.id == "deny":
            self.action_deny()
        else:
            self.action_decide(event.button.id or "once")

    def action_decide(self, scope: str) -> None:
        """Allow the call for ``scope`` (once, session, always)."""
        whole_source = self.query_one("#whole-source", Checkbox).value
        self.dismiss(
            ApprovalDecision(
                allow=True,
                scope=scope,  # type: ignore[arg-type]
                target="source" if whole_source else "tool",
            )
        )

    def action_deny(self) -> None:
        """Refuse the call."""
        self.dismiss(ApprovalDecision(allow=False))


def _fields(schema: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    properties = (schema or {}).get("properties") or {}
    return {name: spec if isinstance(spec, dict) else {} for name, spec in properties.items()}


class ElicitationScreen(ModalScreen[ElicitationResponse]):
    """Answers an MCP server's elicitation: a form built from its schema, or a URL to visit."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, request: ElicitationRequest) -> None:
        super().__init__(classes="dialog-screen")
        self.request = request
        self.fields = _fields(request.requested_schema)

    def compose(self) -> ComposeResult:
        """The message, the URL or form fields, and the buttons."""
        with Vertical(classes="dialog elicitation"):
            yield Label(Text.assemble((f"{self.request.source} asks", "bold"), ":"))
            yield Static(self.request.message)
            if self.request.url:
                yield Static(Text(self.request.url, style="underline"), classes="dialog-url")
            with VerticalScroll(classes="dialog-form"):
                for name, spec in self.fields.items():
                    label = spec.get("title") or name
                    if spec.get("type") == "boolean":
                        yield Checkbox(label, bool(spec.get("default", False)), id=f"field-{name}")
                        continue
                    yield Label(
                        label + (f" — {spec['description']}" if spec.get("description") else "")
                    )
                    kind = spec.get("type")
                    yield Input(
                        str(spec.get("default", "")),
                        id=f"field-{name}",
                        type="integer"
                        if kind == "integer"
                        else "number"
                        if kind == "number"
                        else "text",
                    )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Accept", id="accept", variant="primary")
                yield Button("Decline", id="decline")
                yield Button("Cancel (Esc)", id="cancel", variant="error")

    def content(self) -> dict[str, Any]:
        """The form's values, typed by the schema (empty optional fields are left out).

        Raises:
            ValueError: a number field holds no number.
        """
        values: dict[str, Any] = {}
        for name, spec in self.fields.items():
            widget = self.query_one(f"#field-{name}")
            if isinstance(widget, Checkbox):
                values[name] = widget.value
                continue
            raw = widget.value if isinstance(widget, Input) else ""
            if raw == "":
                continue
            kind = spec.get("type")
            values[name] = (
                int(raw) if kind == "integer" else float(raw) if kind == "number" else raw
            )
        return values

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Accept (with the form's values), decline or cancel."""
        if event.button.id == "accept":
            try:
                content = self.content()
            except ValueError as exc:
                self.notify(f"not a number: {exc}", severity="error")
                return
            self.dismiss(ElicitationResponse(action="accept", content=content))
        elif event.button.id == "decline":
            self.dismiss(ElicitationResponse(action="decline"))
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        """Cancel the request."""
        self.dismiss(ElicitationResponse(action="cancel"))

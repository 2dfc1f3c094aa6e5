"""The confirmation before approving or declining a project's external imports."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from memtui.core.base.terminal import visible
from memtui.core.base.wording import details_line
from memtui.core.cascade.approvals import Decision
from memtui.tui.pane import KeysFooter
from memtui.tui.theme import styled, tone

MUTED = "$muted"


class ImportDecisionDialog(ModalScreen[bool]):
    """Confirm approving or declining the project's external imports, naming what changes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Confirm", id="imports.confirm", tooltip="Record the decision and recompute the cascade"),
        Binding("escape,n", "answer(False)", "Cancel", id="imports.cancel", tooltip="Leave the decision as it is"),
    ]

    def __init__(self, decision: Decision, project: str, items: list[tuple[str, str]], note: str | None, details: str | None = None) -> None:
        super().__init__()
        self.details = details  # the note's details line (the agent's key and file)
        self.decision = decision
        self.project = project
        self.items = items
        self.note = note

    def compose(self) -> ComposeResult:
        approve = self.decision == "approved"
        with Vertical(id="imports-dialog", classes="dialog"):
            yield Label(Text(visible(f"{'Approve' if approve else 'Decline'} external imports for {self.project}?")), classes="dialog-title")
            lead = "These files will load into every session here:" if approve else "These files stay out of every session here:"
            yield Static(styled(lead, style="bold"))
            body = Text()
            for path, origin in self.items:
                body.append("+ " if approve else "⊘ ", tone("bold $success" if approve else MUTED))
                body.append(visible(path), tone("bold"))
                body.append(f"\n    {visible(origin)}\n", tone(MUTED))
            body.rstrip()
            with VerticalScroll(classes="dialog-diff"):
                yield Static(body)
            yield Static(
                styled(
                    "The decision covers every import outside the working directory from Managed, Project and Local "
                    "files of this project, and is kept in memtui's state dir.",
                    style="$soft",
                )
            )
            if self.note:
                yield Static(styled(visible(self.note), style="$warning"))
            if self.details:
                yield Static(styled(visible(details_line(self.details)), style="$muted"))
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{'Approve' if approve else 'Decline'}  y", variant="primary" if approve else "warning", id="yes")
                yield Button("Cancel  esc", id="no")
        yield KeysFooter()  # this dialog's keys, not the pane's under it

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

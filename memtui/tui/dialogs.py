"""Modal dialogs shared by the panes: plan preview, type picker, text prompt, new memory,
conflict resolution, trash, and the in-app editor."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.syntax import Syntax
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    Input,
    Label,
    Select,
    Static,
    TextArea,
)
from textual.widgets.option_list import Option
from textual.widgets.text_area import EditHistory, Selection

from memtui.tui.widgets.option_list import OptionList

from memtui.tui.safe import plain
from memtui.core.base.terminal import visible, visible_block
from memtui.core.writes.edits import Plan, TrashItem
from memtui.core.memory.memories import MEMORY_TYPES, MemoryType
from memtui.tui.pane import KeysFooter
from memtui.tui.badges import type_badge
from memtui.tui.theme import assemble, styled

TYPE_HELP: dict[MemoryType, str] = {
    "user": "who the user is, their role and preferences",
    "feedback": "a correction or a confirmed approach: rule, Why, How to apply",
    "project": "a fact or decision about the work: fact, Why, How to apply",
    "reference": "a pointer to an outside system: tracker, dashboard, docs",
}


class PlanPreview(ModalScreen[bool]):
    """Show a plan's diff, notes and index-cap warning; dismiss with ``True`` to apply.

    The title, the warning and the buttons always show: the notes scroll in a few lines and
    the diff scrolls in whatever height is left (a doctor's Fix-all diff runs to hundreds of
    lines); the footer repeats the keys."""

    BINDINGS = [
        Binding("y", "apply", "Apply", id="plan.apply", tooltip="Apply the change (undoable with u)"),
        Binding("escape,n", "cancel", "Cancel", id="plan.cancel", tooltip="Discard the change"),
    ]

    def __init__(self, plan: Plan, *, confirm_label: str = "Apply") -> None:
        super().__init__()
        self.plan = plan
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        plan = self.plan
        with Vertical(id="plan-dialog", classes="dialog"):
            yield Label(plain(plan.title), classes="dialog-title")
            if plan.index_overflow:
                names = ", ".join(visible(f"[{e.title}]({e.target})") for e in plan.index_overflow[:6])
                more = f" and {len(plan.index_overflow) - 6} more" if len(plan.index_overflow) > 6 else ""
                yield Static(
                    assemble(
                        ("▲ The index would pass the agent's cap (200 lines / 25,000 characters). ", "bold $warning"),
                        f"These entries would no longer be loaded: {names}{more}.",
                    ),
                    classes="dialog-warning",
                )
            if plan.losses:
                yield Static(
                    assemble(
                        ("▲ After this change the agent loses:\n", "bold $warning"),
                        "\n".join(visible(f"• {loss}") for loss in plan.losses),
                    ),
                    classes="dialog-warning",
                    id="plan-losses",
                )
            if plan.notes or plan.skipped:
                with VerticalScroll(classes="dialog-notes"):
                    for note in plan.notes:
                        yield Static(plain(f"• {note}", style="$soft"))
                    for why in plan.skipped:
                        yield Static(plain(f"• not fixed: {why}", style="$warning"))
            with VerticalScroll(classes="dialog-diff", id="plan-diff"):
                yield Static(Syntax(visible_block(plan.diff()) or "(no textual change)", "diff", theme="ansi_dark", word_wrap=True))
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm_label}  y", variant="primary", id="apply")
                yield Button("Cancel  esc", id="cancel")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#apply", Button).focus()

    def on_resize(self) -> None:
        """The diff takes the height left (``1fr``), then shrinks to a diff shorter than that."""
        self.query_one("#plan-diff", VerticalScroll).styles.height = "1fr"
        self.call_after_refresh(self._fit_diff)

    def _fit_diff(self) -> None:
        diff = self.query_one("#plan-diff", VerticalScroll)
        needed = sum(child.outer_size.height for child in diff.children) + diff.styles.gutter.height
        if 0 < needed < diff.outer_size.height:
            diff.styles.height = needed

    @on(Button.Pressed, "#apply")
    def action_apply(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


class TypePicker(ModalScreen["MemoryType | None"]):
    """Choose one of the four memory types (keys 1–4)."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="type.cancel", tooltip="Keep the current type"),
        *(Binding(str(i + 1), f"pick('{t}')", t, show=False, id=f"type.{t}", tooltip=f"Make it a {t} memory") for i, t in enumerate(MEMORY_TYPES)),
    ]

    def __init__(self, current: str | None, relpath: str) -> None:
        super().__init__()
        self.current = current
        self.relpath = relpath

    def compose(self) -> ComposeResult:
        with Vertical(id="type-dialog", classes="dialog"):
            yield Label(plain(f"Type of {self.relpath}"), classes="dialog-title")
            options = []
            for i, t in enumerate(MEMORY_TYPES):
                label = assemble(f"{i + 1} ", type_badge(t, t), f"  {TYPE_HELP[t]}")
                options.append(Option(label, id=t))
            yield OptionList(*options, id="type-options")
            yield Static(plain(f"now: {self.current or 'untyped'}  ·  1–4 or enter to choose, esc to cancel", style="$muted"))
        yield KeysFooter()  # this dialog's keys, not the list's under it

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        if self.current in MEMORY_TYPES:
            option_list.highlighted = MEMORY_TYPES.index(self.current)  # type: ignore[arg-type]
        option_list.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)  # type: ignore[arg-type]

    def action_pick(self, mem_type: str) -> None:
        self.dismiss(mem_type)  # type: ignore[arg-type]

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextPrompt(ModalScreen["str | None"]):
    """Ask for one line of text. ``check``: what is wrong with a value (``None``: nothing); a
    value it refuses keeps the dialog open with the text as typed and the reason under it."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Cancel")]

    def __init__(self, title: str, value: str = "", *, hint: str = "", action: str = "accepts", check: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.hint = hint
        self.action = action
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog", classes="dialog"):
            yield Label(plain(self.title_text), classes="dialog-title")
            yield Input(self.value, id="prompt-input")
            yield Static("", id="prompt-error", classes="field-error")
            hint = f"{self.hint + ' · ' if self.hint else ''}enter {self.action} · esc cancels"
            yield Static(plain(hint, style="$muted"))
        yield KeysFooter()  # this dialog's keys, not the list's under it

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        problem = self.check(event.value) if self.check is not None else None
        if problem:
            self.query_one("#prompt-error", Static).update(plain(problem))
            return
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NewMemoryDialog(ModalScreen["tuple[MemoryType, str, str] | None"]):
    """Type, name and one-line description of a new memory. Create with a field left blank
    keeps the dialog open and says, under the field, what is missing (the core's
    ``plan_create`` requires both)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="new.cancel", tooltip="Cancel")]
    # field id -> what its message says when it is blank
    REQUIRED: ClassVar[dict[str, str]] = {
        "new-name": "A name is required: a short title.",
        "new-description": "A description is required: one line, it is what recall matches on.",
    }

    def compose(self) -> ComposeResult:
        with Vertical(id="new-dialog", classes="dialog"):
            yield Label("New memory", classes="dialog-title")
            yield Select([(f"{t} — {TYPE_HELP[t]}", t) for t in MEMORY_TYPES], value="feedback", allow_blank=False, id="new-type")
            yield Input(placeholder="Name (a short title)", id="new-name")
            yield Static(id="new-name-error", classes="field-error")
            yield Input(placeholder="Description (one line: what recall matches on)", id="new-description")
            yield Static(id="new-description-error", classes="field-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Create  enter", variant="primary", id="create")
                yield Button("Cancel  esc", id="cancel")
        yield KeysFooter()  # this dialog's keys, not the list's under it

    def on_mount(self) -> None:
        self.query_one("#new-name", Input).focus()

    @on(Input.Submitted, "#new-name")
    def _next(self) -> None:
        self.query_one("#new-description", Input).focus()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        """A field filled in loses its message."""
        if event.input.id in self.REQUIRED and event.value.strip():
            self._mark(event.input.id, None)

    def _mark(self, field_id: str, message: str | None) -> None:
        error = self.query_one(f"#{field_id}-error", Static)
        error.update(message or "")
        self.query_one(f"#{field_id}", Input).set_class(message is not None, "-invalid")

    @on(Input.Submitted, "#new-description")
    @on(Button.Pressed, "#create")
    def _create(self) -> None:
        values = {field_id: self.query_one(f"#{field_id}", Input).value for field_id in self.REQUIRED}
        missing = [field_id for field_id, value in values.items() if not value.strip()]
        for field_id, message in self.REQUIRED.items():
            self._mark(field_id, message if field_id in missing else None)
        if missing:
            self.query_one(f"#{missing[0]}", Input).focus()
            return
        mem_type = self.query_one("#new-type", Select).value
        self.dismiss((mem_type, values["new-name"], values["new-description"]))  # type: ignore[arg-type]

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class ConflictDialog(ModalScreen[str]):
    """The file changed on disk since it was opened: ``reload``, ``keep`` (mine, the disk
    version kept as a backup in the journal) or ``diff``; ``cancel`` keeps editing."""

    BINDINGS = [
        Binding("r", "choose('reload')", "Reload", id="conflict.reload", tooltip="Drop my edit, reload from disk (asks first)"),
        Binding("k", "choose('keep')", "Keep mine", id="conflict.keep", tooltip="Save my version; the disk version is backed up (undo restores it)"),
        Binding("d", "choose('diff')", "Diff", id="conflict.diff", tooltip="Show what differs"),
        Binding("escape", "choose('cancel')", "Back", id="conflict.cancel", tooltip="Back to editing"),
    ]

    def __init__(self, relpath: str, diff: str | None = None) -> None:
        super().__init__()
        self.relpath = relpath
        self.diff = diff

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-dialog", classes="dialog"):
            yield Label(plain(f"{self.relpath} changed on disk"), classes="dialog-title")
            yield Static(
                "Someone (maybe the agent) changed this file after you opened it. Nothing was overwritten.",
                classes="dialog-warning",
            )
            if self.diff is not None:
                with VerticalScroll(classes="dialog-diff"):
                    yield Static(Syntax(visible_block(self.diff) or "(identical)", "diff", theme="ansi_dark", word_wrap=True))
            with Horizontal(classes="dialog-buttons"):
                yield Button("Reload  r", id="reload")
                yield Button("Keep mine  k", variant="warning", id="keep")
                yield Button("Diff  d", id="diff")
                yield Button("Back  esc", id="cancel")
        yield KeysFooter()  # this dialog's keys, not the list's under it

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class TrashDialog(ModalScreen["TrashItem | None"]):
    """Deleted memories; enter restores one."""

    BINDINGS = [Binding("escape,q", "cancel", "Close", id="trash.cancel", tooltip="Close the trash")]

    def __init__(self, items: list[TrashItem]) -> None:
        super().__init__()
        self.items = items

    def compose(self) -> ComposeResult:
        with Vertical(id="trash-dialog", classes="dialog"):
            count = len(self.items)
            title = "empty" if count == 0 else f"{count} deleted memor{'y' if count == 1 else 'ies'}"
            yield Label(f"Trash — {title}", classes="dialog-title")
            if self.items:
                yield OptionList(
                    *(Option(assemble((visible(item.relpath), "bold"), (f"  deleted {item.deleted_at[:16].replace('T', ' ')} · {item.size:,} bytes", "$muted"))) for item in self.items),
                    id="trash-options",
                )
                yield Static(styled("enter restores (with its index line) · esc closes", style="$muted"))
            else:
                yield Static("Nothing deleted yet. Deleted memories land here, outside the memory dir.")
        yield KeysFooter()  # this dialog's keys, not the list's under it

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.items[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


class EditorScreen(Screen["str | None"]):
    """Edit a memory's whole text in a Markdown ``TextArea``. ctrl+s saves, esc cancels
    (asking first when the text differs from the saved one).

    esc is a priority binding: the code editor would take it otherwise (to move the focus on,
    where there is nothing to move to)."""

    PALETTE = "Editor"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="editor.save", tooltip="Save (atomic; undo with u)"),
        Binding("escape", "cancel", "Cancel", priority=True, id="editor.cancel", tooltip="Close without saving (asks when there are unsaved edits)"),
    ]

    def __init__(self, relpath: str, text: str, *, saved: str | None = None, title: str | None = None, resume: EditorScreen | None = None) -> None:
        """``text``: what the editor opens with; ``saved``: the text as saved (default:
        ``text``), what esc compares with before it asks; ``title``: the line above the text
        (default: "editing <relpath>"); ``resume``: the editor this one takes over from, after
        a save that was not written (refused, cancelled at a warning) — its cursor, selection,
        scroll and undo history carry over, so the user goes on where they were."""
        super().__init__()
        self.relpath = relpath
        self.title_text = title if title is not None else f"editing {relpath}"
        self.text = text
        self.original = text if saved is None else saved
        self.resume = resume
        # where the user was when ctrl+s closed this editor (for an editor that resumes it)
        self.selection: Selection | None = None
        self.scroll: tuple[float, float] = (0, 0)
        self.history: EditHistory | None = None

    def compose(self) -> ComposeResult:
        yield Label(plain(f" {self.title_text}"), id="editor-title")
        yield TextArea.code_editor(self.text, language="markdown", id="editor-area", soft_wrap=True)
        yield KeysFooter()

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        before = self.resume
        if before is not None and before.history is not None and before.selection is not None:
            area.history = before.history  # its last state is this text: ctrl+z goes back from here
            area.selection = before.selection
            self.call_after_refresh(area.scroll_to, *before.scroll, animate=False)
        area.focus()

    def action_save(self) -> None:
        area = self.query_one(TextArea)
        self.selection, self.scroll, self.history = area.selection, (area.scroll_x, area.scroll_y), area.history
        self.dismiss(area.text)

    def action_cancel(self) -> None:
        text = self.query_one(TextArea).text
        if text == self.original:
            self.dismiss(None)
            return

        def confirmed(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(DiscardDialog(), confirmed)


class DiscardDialog(ModalScreen[bool]):
    """Confirm dropping unsaved edits (``title`` and ``confirm_label`` say what dropping them
    does: close the editor, reload from disk)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Discard", id="discard.yes", tooltip="Drop the unsaved edits"),
        Binding("escape,n", "answer(False)", "Keep editing", id="discard.no", tooltip="Back, the edits kept"),
    ]

    def __init__(self, title: str = "Discard unsaved edits?", *, confirm_label: str = "Discard", keep_label: str = "Keep editing") -> None:
        super().__init__()
        self.title_text = title
        self.confirm_label = confirm_label
        self.keep_label = keep_label

    def compose(self) -> ComposeResult:
        with Vertical(id="discard-dialog", classes="dialog"):
            yield Label(plain(self.title_text), classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm_label}  y", variant="error", id="yes")
                yield Button(f"{self.keep_label}  esc", id="no")
        yield KeysFooter()  # this dialog's keys, not the list's under it

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

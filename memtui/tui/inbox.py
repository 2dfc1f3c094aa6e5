"""The extraction inbox (SPEC §7): proposed memories to accept, edit then accept, or reject —
and the source conversation of a memory (provenance)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from memtui.tui.safe import block, plain
from memtui.core.base.terminal import visible, visible_block
from memtui.core.base.clock import system_now
from memtui.core.writes.edits import ApplyError, ConflictError, EditError
from memtui.core.extract import SourceExcerpt, proposal_excerpt
from memtui.core.extract.inbox import Inbox, InboxError, Proposal
from memtui.core.writes.journal import Journal
from memtui.core.places.locations import Locations
from memtui.tui.badges import type_badge
from memtui.tui.dialogs import EditorScreen, PlanPreview
from memtui.tui.styles import stylesheets


def excerpt_text(excerpt: SourceExcerpt | None) -> Text:
    """The conversation around a memory's source message, the source turn marked."""
    if excerpt is None:
        return Text("No source recorded (no originSessionId).", style="#5c6370")
    if excerpt.error:
        return plain(f"Source unavailable: {excerpt.error}", style="#e5c07b")
    out = Text()
    out.append(f"session {visible(excerpt.session_id or '?')}\n\n", style="#5c6370")
    for turn in excerpt.turns:
        marker, style = ("▶ ", "bold #e5c07b") if turn.is_source else ("  ", "#abb2bf")
        out.append(f"{marker}{visible(turn.role)}", style=style)
        out.append(f"  {visible(turn.timestamp or '')}\n", style="#5c6370")
        body = turn.text if len(turn.text) <= 1500 else turn.text[:1500] + "…"
        out.append(visible_block(body) + "\n\n", style="" if turn.is_source else "#abb2bf")
    return out


class SourceDialog(ModalScreen[None]):
    """Show the conversation excerpt a memory came from."""

    BINDINGS = [Binding("escape,q", "close", "Close", id="source.close", tooltip="Close")]

    def __init__(self, title: str, excerpt: SourceExcerpt | None) -> None:
        super().__init__()
        self.title_text = title
        self.excerpt = excerpt

    def compose(self) -> ComposeResult:
        with Vertical(id="source-dialog", classes="dialog"):
            yield Label(plain(self.title_text), classes="dialog-title")
            with VerticalScroll(classes="dialog-diff"):
                yield Static(excerpt_text(self.excerpt))

    def action_close(self) -> None:
        self.dismiss(None)


class InboxScreen(Screen[bool]):
    """Pending proposals from extraction. Dismisses with ``True`` when a memory was written."""

    CSS_PATH = stylesheets("inbox")
    BINDINGS = [
        Binding("a", "accept", "Accept", id="inbox.accept", tooltip="Write it (through the normal write path; index updated)"),
        Binding("e", "edit", "Edit & accept", id="inbox.edit", tooltip="Edit the memory, then accept it"),
        Binding("x", "reject", "Reject", id="inbox.reject", tooltip="Reject it (it will not be proposed again)"),
        Binding("escape,q", "close", "Back", id="inbox.close", tooltip="Back to the memories"),
    ]

    def __init__(self, locations: Locations) -> None:
        super().__init__()
        self.locations = locations
        self.inbox = Inbox(locations.state_dir, locations.memory_dir)
        self.proposals: list[Proposal] = []
        self.changed = False

    def compose(self) -> ComposeResult:
        yield Static(id="inbox-summary")
        with Horizontal(id="inbox-body"):
            yield OptionList(id="inbox-list")
            with VerticalScroll(id="inbox-detail"):
                yield Static(id="inbox-proposal")
                yield Static(id="inbox-source")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    def reload(self, keep: str | None = None) -> None:
        """Re-read the inbox (the Stop hook may have added proposals)."""
        self.proposals = self.inbox.pending()
        options = self.query_one("#inbox-list", OptionList)
        options.clear_options()
        for p in self.proposals:
            label = Text.assemble(type_badge(p.type, p.type), " ", (visible(p.name), "bold"), (" · heuristic" if p.heuristic else "", "#e5c07b"))
            options.add_option(Option(label, id=p.id))
        n = len(self.proposals)
        self.query_one("#inbox-summary", Static).update(
            Text.assemble(
                (f"{n} proposed memor{'y' if n == 1 else 'ies'}", "bold"),
                ("  ·  from `memtui extract` or the Stop hook; nothing is written until you accept", "#5c6370"),
            )
        )
        if self.proposals:
            ids = [p.id for p in self.proposals]
            options.highlighted = ids.index(keep) if keep in ids else 0
            options.focus()
            self._show(self.proposals[options.highlighted or 0])
        else:
            self._show(None)

    @on(OptionList.OptionHighlighted, "#inbox-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.proposals):
            self._show(self.proposals[event.option_index])

    def _show(self, p: Proposal | None) -> None:
        detail = self.query_one("#inbox-proposal", Static)
        source = self.query_one("#inbox-source", Static)
        if p is None:
            detail.update(Text("The inbox is empty.\n\nRun `memtui extract <transcript>` or wire `memtui hook stop` into your agent.", style="#abb2bf"))
            source.update("")
            return
        head = Text.assemble(
            type_badge(p.type, p.type),
            (f"  {visible(p.path)}", "bold"),
            (f"  ({p.kind}, by the {visible(p.extractor)} extractor{'; heuristic — check it' if p.heuristic else ''})\n\n", "#5c6370"),
            ("name         ", "#5c6370"), plain(p.name), "\n",
            ("description  ", "#5c6370"), plain(p.description), "\n\n",
            block(p.body.strip()),
        )
        detail.update(head)
        source.update(Text.assemble(("\nSource conversation\n", "bold"), excerpt_text(proposal_excerpt(p, self.locations.sessions_dir))))

    def _selected(self) -> Proposal | None:
        index = self.query_one("#inbox-list", OptionList).highlighted
        return self.proposals[index] if index is not None and 0 <= index < len(self.proposals) else None

    def _accept(self, p: Proposal) -> None:
        try:
            plan = self.inbox.plan(p.id)
        except (InboxError, EditError, OSError) as exc:
            self.notify(str(exc), severity="warning")
            return

        def go(ok: bool | None) -> None:
            if not ok:
                return
            try:
                result = self.inbox.accept(p.id, Journal(self.locations.state_dir, self.locations.memory_dir), system_now())
            except (InboxError, EditError, ConflictError, ApplyError, OSError) as exc:
                self.notify(str(exc), title="Not accepted", severity="error", timeout=10)
            else:
                self.changed = True
                self.notify(f"{result.relpath} written  ·  u in the list undoes it", title="Accepted")
            self.reload()

        self.app.push_screen(PlanPreview(plan, confirm_label="Accept"), go)

    def action_accept(self) -> None:
        p = self._selected()
        if p is not None:
            self._accept(p)

    def action_edit(self) -> None:
        p = self._selected()
        if p is None:
            return
        try:
            plan = self.inbox.plan(p.id)
        except (InboxError, EditError, OSError) as exc:
            self.notify(str(exc), severity="warning")
            return
        written = next((c.after for c in plan.changes if c.relpath == p.path and c.after is not None), b"")

        def saved(text: str | None) -> None:
            if text is None:
                return
            try:
                self.inbox.update_from_text(p.id, text)
            except (InboxError, EditError) as exc:
                self.notify(str(exc), title="Not saved", severity="error")
                return
            self.reload(keep=p.id)
            fresh = next((q for q in self.proposals if q.id == p.id), None)
            if fresh is not None:
                self._accept(fresh)

        self.app.push_screen(EditorScreen(p.path, written.decode("utf-8", errors="replace")), saved)

    def action_reject(self) -> None:
        p = self._selected()
        if p is None:
            return
        try:
            self.inbox.reject(p.id, system_now())
        except (InboxError, OSError) as exc:
            self.notify(str(exc), severity="warning")
            return
        self.notify(f"Rejected {p.name}", title="Inbox")
        self.reload()

    def action_close(self) -> None:
        self.dismiss(self.changed)

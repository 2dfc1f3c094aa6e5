"""The extraction inbox: proposed memories to accept, edit then accept, or reject — and the
source conversation of a memory (provenance). The inbox file, the transcripts and every
write are read and written off the UI thread."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from memtui.tui.widgets.option_list import OptionList
from textual.widgets.option_list import Option

from memtui.tui.safe import block, plain
from memtui.core.base.terminal import visible, visible_block
from memtui.core.base.clock import system_now
from memtui.core.extract import SourceExcerpt, proposal_excerpt
from memtui.core.extract.inbox import AcceptResult, Inbox, InboxError, Proposal
from memtui.core.places.locations import Locations
from memtui.core.writes.edits import ApplyError, ConflictError, EditError
from memtui.core.writes.journal import Journal
from memtui.tui.badges import type_badge
from memtui.tui.dialogs import EditorScreen, PlanPreview
from memtui.tui.pane import Failure, KeysFooter, Latest, PaneScreen, WorkFailed
from memtui.tui.styles import stylesheets
from memtui.tui.theme import tone

# A turn of the source conversation is cut here (the transcript has it whole).
TURN_CHARS = 1500


def excerpt_text(excerpt: SourceExcerpt | None) -> Text:
    """The conversation around a memory's source message, the source turn marked."""
    muted, soft = tone("$muted"), tone("$soft")
    if excerpt is None:
        return Text("No source recorded (no originSessionId).", style=muted)
    if excerpt.error:
        return plain(f"Source unavailable: {excerpt.error}", style="$warning")
    out = Text()
    out.append(f"session {visible(excerpt.session_id or '?')}\n\n", style=muted)
    for turn in excerpt.turns:
        marker, style = ("▶ ", tone("bold $warning")) if turn.is_source else ("  ", soft)
        out.append(f"{marker}{visible(turn.role)}", style=style)
        out.append(f"  {visible(turn.timestamp or '')}\n", style=muted)
        body = turn.text if len(turn.text) <= TURN_CHARS else turn.text[:TURN_CHARS] + "…"
        out.append(visible_block(body) + "\n\n", style="" if turn.is_source else soft)
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
        yield KeysFooter()  # this dialog's keys, not the list's under it

    def action_close(self) -> None:
        self.dismiss(None)


class InboxScreen(PaneScreen):
    """Pending proposals from extraction. Dismisses with ``True`` when a memory was written."""

    CSS_PATH = stylesheets("inbox")
    BINDINGS = [
        Binding("a", "accept", "Accept", id="inbox.accept", tooltip="Write it (through the normal write path; index updated)"),
        Binding("e", "edit", "Edit & accept", id="inbox.edit", tooltip="Edit the memory, then accept it"),
        Binding("x", "reject", "Reject", id="inbox.reject", tooltip="Reject it (it will not be proposed again)"),
        Binding("escape,q", "close", "Back", id="inbox.close", tooltip="Back to the memories"),
    ]
    FAILURE_TITLES = {
        "inbox-load": "Cannot read the inbox",
        "inbox-source": "Cannot read the source",
        "inbox-write": "Not done",
    }

    @dataclass
    class Loaded(Message):
        """The pending proposals, read; ``keep``: the one to highlight."""

        proposals: list[Proposal]
        keep: str | None

    @dataclass
    class SourceRead(Message):
        """The source conversation of proposal ``proposal_id`` (``ticket``: see ``Latest``)."""

        proposal_id: str
        excerpt: SourceExcerpt
        ticket: int

    @dataclass
    class Written(Message):
        """A proposal was accepted (``accepted``) or rejected: ``title`` and ``text`` say how."""

        title: str
        text: str
        accepted: AcceptResult | None

    def __init__(self, locations: Locations) -> None:
        super().__init__()
        self.locations = locations
        self.inbox = Inbox(locations.state_dir, locations.memory_dir)
        self.proposals: list[Proposal] = []
        self.changed = False
        self._sources = Latest()

    def compose(self) -> ComposeResult:
        yield Static(id="inbox-summary")
        with Horizontal(id="inbox-body"):
            yield OptionList(id="inbox-list")
            with VerticalScroll(id="inbox-detail"):
                yield Static(id="inbox-proposal")
                yield Static(id="inbox-source")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#inbox-summary", Static).update(Text("Reading the inbox…", style=tone("$muted")))
        self.reload()

    def reload(self, keep: str | None = None) -> None:
        """Re-read the inbox (the Stop hook may have added proposals)."""
        self.load_proposals(keep)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inbox-load")
    def load_proposals(self, keep: str | None) -> None:
        """Read the pending proposals off the UI thread."""
        self.post_if_current(self.Loaded(self.inbox.pending(), keep))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        self.proposals = message.proposals
        options = self.query_one("#inbox-list", OptionList)
        options.clear_options()
        for p in self.proposals:
            label = Text.assemble(type_badge(p.type, p.type), " ", (visible(p.name), "bold"), (" · heuristic" if p.heuristic else "", tone("$warning")))
            options.add_option(Option(label, id=p.id))
        n = len(self.proposals)
        self.query_one("#inbox-summary", Static).update(
            Text.assemble(
                (f"{n} proposed memor{'y' if n == 1 else 'ies'}", "bold"),
                ("  ·  from `memtui extract` or the Stop hook; nothing is written until you accept", tone("$muted")),
            )
        )
        if self.proposals:
            ids = [p.id for p in self.proposals]
            options.highlighted = ids.index(message.keep) if message.keep in ids else 0
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
            detail.update(Text("The inbox is empty.\n\nRun `memtui extract <transcript>` or wire `memtui hook stop` into your agent.", style=tone("$soft")))
            source.update("")
            return
        muted = tone("$muted")
        head = Text.assemble(
            type_badge(p.type, p.type),
            (f"  {visible(p.path)}", "bold"),
            (f"  ({p.kind}, by the {visible(p.extractor)} extractor{'; heuristic — check it' if p.heuristic else ''})\n\n", muted),
            ("name         ", muted), plain(p.name), "\n",
            ("description  ", muted), plain(p.description), "\n\n",
            block(p.body.strip()),
        )
        detail.update(head)
        source.update(Text.assemble(("\nSource conversation\n", "bold"), ("reading…", muted)))
        self.read_source(p, self._sources.take())

    @work(thread=True, exclusive=True, exit_on_error=False, group="inbox-source")
    def read_source(self, proposal: Proposal, ticket: int) -> None:
        """Read the source conversation of ``proposal`` (a transcript) off the UI thread."""
        excerpt = proposal_excerpt(proposal, self.locations.sessions_dir)
        self.post_if_current(self.SourceRead(proposal.id, excerpt, ticket))

    @on(SourceRead)
    def _source_read(self, message: SourceRead) -> None:
        if self._sources.is_current(message.ticket):
            self.query_one("#inbox-source", Static).update(Text.assemble(("\nSource conversation\n", "bold"), excerpt_text(message.excerpt)))

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
            if ok:
                self.accept_worker(p)

        self.app.push_screen(PlanPreview(plan, confirm_label="Accept"), go)

    @work(thread=True, exclusive=True, exit_on_error=False, group="inbox-write")
    def accept_worker(self, p: Proposal) -> None:
        """Write proposal ``p`` through the write path (which waits for the memory dir's lock)."""
        try:
            result = self.inbox.accept(p.id, Journal(self.locations.state_dir, self.locations.memory_dir), system_now())
        except (InboxError, EditError, ConflictError, ApplyError, OSError) as exc:
            raise WorkFailed("Not accepted", str(exc)) from exc
        self.post_message(self.Written("Accepted", f"{result.relpath} written  ·  u in the Memories list undoes it", result))

    @work(thread=True, exclusive=True, exit_on_error=False, group="inbox-write")
    def reject_worker(self, p: Proposal) -> None:
        """Mark proposal ``p`` rejected (it will not be proposed again)."""
        try:
            self.inbox.reject(p.id, system_now())
        except (InboxError, OSError) as exc:
            raise WorkFailed("Not rejected", str(exc)) from exc
        self.post_message(self.Written("Inbox", f"Rejected {p.name}", None))

    @on(Written)
    def _written(self, message: Written) -> None:
        if message.accepted is not None:
            self.changed = True
        self.notify(message.text, title=message.title)
        self.reload()

    def worker_failed(self, failure: Failure) -> None:
        """A write that failed: the inbox as it is now."""
        if failure.group == "inbox-write":
            self.reload()

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
                fresh = self.inbox.update_from_text(p.id, text)
            except (InboxError, EditError) as exc:
                self.notify(str(exc), title="Not saved", severity="error")
                return
            self.reload(keep=p.id)
            self._accept(fresh)

        self.app.push_screen(EditorScreen(p.path, written.decode("utf-8", errors="replace")), saved)

    def action_reject(self) -> None:
        p = self._selected()
        if p is not None:
            self.reject_worker(p)

    def action_close(self) -> None:
        self.dismiss(self.changed)

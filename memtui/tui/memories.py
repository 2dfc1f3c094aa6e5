"""The Memories pane: a typed browser with age badges, filter, search, preview and the index gauge."""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult, SystemCommand
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import DataTable, Input, Markdown, Select, Static
from textual.worker import get_current_worker

from memtui.core.base.wording import counted
from memtui.core.base.safe_read import read_text_regular
from memtui.core.base.terminal import visible, visible_block
from memtui.core.base.clock import system_now
from memtui.core.extract import SourceExcerpt
from memtui.core.extract.inbox import Inbox
from memtui.core.memory.catalog import Catalog, MemoryEntry, catalog_changes, load_catalog
from memtui.core.memory.filters import TYPE_FILTERS, MemoryFilter, TypeFilter
from memtui.core.memory.memories import MAX_MEMORY_BYTES, Memory, MemoryType, read_memory
from memtui.core.writes.links import edit_refusal
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.search import CatalogSearch
from memtui.core.places.autoflavor import OtherFlavorHint, other_flavor_hint
from memtui.core.places.locations import Locations, MemoryDirProblem, memory_dir_problem
from memtui.core.sessions.usage import USE_SORTS, UseSort, by_use
from memtui.core.verify import MemoryVerification, VerifyReport, verify_memories, verify_root
from memtui.core.verify.claims import stated_claims
from memtui.core.writes.edits import (
    ApplyError,
    ConflictError,
    EditError,
    FileChange,
    Plan,
    TrashItem,
    apply_plan,
    plan_create,
    plan_create_text,
    plan_delete,
    plan_rename,
    plan_retype,
    plan_save,
    restore_plan,
    trash,
    undo_plan,
    undoable_entries,
)
from memtui.core.writes.journal import Journal, JournalEntry

if TYPE_CHECKING:
    from memtui.core.sessions.usage import UsageIndex, UsageReport, UseDetail
from memtui.tui.badges import age_badge, type_badge
from memtui.tui.dialogs import (
    ConflictDialog,
    DiscardDialog,
    EditorScreen,
    NewMemoryDialog,
    PlanPreview,
    TextPrompt,
    TrashDialog,
    TypePicker,
)
from memtui.tui.heap import freeze_long_lived, thaw
from memtui.tui.pane import Failure, Latest, Pane, WorkFailed
from memtui.tui.safe import markup_safe, plain
from memtui.tui.theme import SEVERITY_ICON, assemble, severity_style, styled, tone
from memtui.tui.widgets.index_gauge import IndexGauge
from memtui.tui.widgets.memory_table import MemoryTable
from memtui.tui.widgets.usage_view import UsedKey, UsesDialog, usage_summary, used_key, uses_block

# The type filter's choices: (label, filter).
TYPE_CHOICES: list[tuple[str, TypeFilter]] = [
    ("All types" if f == "all" else "untyped" if f == "none" else f, f) for f in TYPE_FILTERS
]
# On a first load, this many newest memories are read and shown before the rest (a dir of
# 20,000 memories shows its first rows in well under a second).
FIRST_BATCH = 300

# From this many rows on, a complete list (catalog and rows) is kept out of Python's garbage
# collector's full collections (`freeze_long_lived`), each new one collected first.
FREEZE_AT = 2_000

# Up to this many memories a search runs at once on the UI thread (a few milliseconds, bodies read
# included); a larger catalog is searched in a worker, through the catalog database's index, the
# latest query winning (memtui's choice).
SYNC_SEARCH_MAX = 200
# A search in a worker waits for its first matches to be drawn before it looks for the rest,
# checking this often (seconds) whether a newer search replaced it.
FIRST_DRAW_WAIT = 0.05

# While the search is typed, the preview follows the list once no key came for this long
# (seconds; memtui's choice): laying out a Markdown body per key would slow each key down.
PREVIEW_AFTER_TYPING = 0.25

# The preview renders at most this much of a body / of one field (a 5 MB memory must not freeze
# the UI; the editor shows everything).
PREVIEW_BODY_CHARS = 20_000
PREVIEW_FIELD_CHARS = 2_000


def _cap(text: str) -> str:
    return text if len(text) <= PREVIEW_FIELD_CHARS else text[:PREVIEW_FIELD_CHARS] + f"… ({len(text):,} characters)"


def _show_value(value: object) -> str:
    """A frontmatter value as YAML would show it (lists and mappings flow-style, not Python)."""
    if isinstance(value, str):
        return value
    import yaml

    try:
        return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10_000).strip().removesuffix("...").strip()
    except yaml.YAMLError:
        return str(value)


def shorten_home(path: Path) -> str:
    """``path`` with the home directory written as ``~``."""
    home = Path.home()
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


class MemoriesPane(Pane):
    """Browse the memories of one memory dir."""

    MAIN = "#memories-table"
    PALETTE_TITLES = {
        "memories.search": ("search", "Focus the search box"),
        "memories.type": ("cycle type filter", "All → user → feedback → project → reference → untyped"),
        "memories.back": ("leave or clear the search", "Out of the search box, the search kept; again: clear it"),
        "memories.to-table": ("to the list", "From the search box to the list, the search kept"),
        "memories.edit-external": ("edit in $EDITOR", "Edit the selected memory in $VISUAL / $EDITOR"),
        "memories.new": ("new memory", "Create a memory: type, name, description, then its body"),
        "memories.delete": ("delete", "Move the selected memory to memtui's trash (restorable)"),
        "memories.source": ("conversation at a use", "Open the conversation where the agent used the selected memory, or the one it came from"),
        "memories.sort": ("sort by use", "Newest → most used → least used, from the agent's transcripts"),
        "memories.never-used": ("never used", "Only the memories the agent never used in the sessions on record"),
        "memories.first": ("first memory", "The cursor to the first memory listed"),
        "memories.last": ("last memory", "The cursor to the last memory listed"),
    }
    FAILURE_TITLES = {
        "memories-scan": "Cannot scan the memory dir",
        "memories-apply": "Not saved",
        "memories-source": "Cannot read the source",
        "memories-usage": "Cannot read the agent's transcripts",
        "memories-watch": "Live reload stopped",
        "memory-rows": "Cannot list the memories",
    }

    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="memories.search", tooltip="Search name, description and body"),
        Binding("t", "cycle_type", "Type filter", id="memories.type", tooltip="Cycle the type filter"),
        Binding("r", "reload_asked", "Reload", show=False, id="memories.reload", tooltip="Re-scan the memory dir and say what changed"),
        Binding("escape", "back", "Back", show=False, id="memories.back", tooltip="Leave the search box (the search stays); again to clear the search"),
        Binding("down", "to_table", "List", show=False, id="memories.to-table", tooltip="From the search box to the list (the search stays)"),
        Binding("e", "edit", "Edit", id="memories.edit", tooltip="Edit the selected memory in the app"),
        Binding("E", "edit_external", "$EDITOR", show=False, id="memories.edit-external", tooltip="Edit in $VISUAL / $EDITOR"),
        Binding("y", "retype", "Re-type", id="memories.retype", tooltip="Choose one of the four types (lifts metadata.type, fixes case)"),
        Binding("m", "rename", "Rename", show=False, id="memories.rename", tooltip="Rename the file; its index link follows"),
        Binding("n", "new", "New", id="memories.new", tooltip="Create a memory (with its index entry)"),
        Binding("d", "delete", "Delete", id="memories.delete", tooltip="Move to memtui's trash (restorable)"),
        Binding("u", "undo", "Undo", id="memories.undo", tooltip="Undo the last change"),
        Binding("z", "trash", "Trash", show=False, id="memories.trash", tooltip="Deleted memories; restore one"),
        Binding("D", "doctor", "Doctor", id="memories.doctor", tooltip="Every check of the lint catalog, with safe fixes"),
        Binding("W", "stores", "Stores", show=False, id="memories.stores", tooltip="Every memory store in play: who read and who wrote each, what is wrong, the fix"),
        Binding("I", "inbox", "Inbox", id="memories.inbox", tooltip="Memories proposed by extraction: accept, edit, reject"),
        Binding("o", "source", "Source", id="memories.source", tooltip="The conversation at a use of this memory (from the agent's transcripts), or the one it came from"),
        Binding("U", "cycle_sort", "Sort", show=False, id="memories.sort", tooltip="Sort: newest → most used → least used (the agent's own use, from its transcripts)"),
        Binding("N", "toggle_never_used", "Never used", show=False, id="memories.never-used", tooltip="Only the memories the agent never used in the sessions on record"),
    ]

    type_filter: reactive[TypeFilter] = reactive("all")
    search: reactive[str] = reactive("")
    sort_by: reactive[UseSort] = reactive("newest")
    never_used: reactive[bool] = reactive(False)
    applying: reactive[bool] = reactive(False, init=False)  # a change is being written

    @dataclass
    class CatalogLoaded(Message):
        """A scan finished: the new catalog, how many proposals wait in the inbox
        (``ticket``: the scan's, see ``Latest``), and the search over it (``None``: a first
        batch, searched without the index)."""

        catalog: Catalog
        inbox: int = 0
        ticket: int = 0
        searcher: CatalogSearch | None = None
        other_flavor: OtherFlavorHint | None = None  # an empty memory dir: what the other flavor has

    @dataclass
    class SearchFound(Message):
        """Matches of the search ``ticket`` (see ``Latest``): positions in the catalog, ``done``
        with the last chunk."""

        ticket: int
        positions: tuple[int, ...]
        done: bool
        drawn: threading.Event | None = None  # set once these matches are on screen

    @dataclass
    class Verified(Message):
        """The claims of a catalog's memories, checked against the project."""

        catalog: Catalog
        report: VerifyReport

    @dataclass
    class UsageLoaded(Message):
        """The agent's transcripts were read: every memory's usage."""

        report: UsageReport

    @dataclass
    class CatalogFailed(Message):
        """A scan could not run: there is no memory dir to read."""

        problem: MemoryDirProblem
        ticket: int = 0
        other_flavor: OtherFlavorHint | None = None

    @dataclass
    class Applied(Message):
        """A change was written (``entry``: its journal entry); ``select``: the memory to put
        the cursor on; ``next_undo``: after an undo, the title of the change a further undo
        reverts (``None``: none left)."""

        entry: JournalEntry
        select: str | None
        next_undo: str | None = None

    @dataclass
    class Conflicted(Message):
        """A change was not written: a file changed on disk since it was read."""

        reason: str

    @dataclass
    class SourceRead(Message):
        """The conversation a memory came from, read."""

        title: str
        excerpt: SourceExcerpt | None

    def __init__(self, locations: Locations, *, watch: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locations = locations
        self.catalog: Catalog | None = None
        self._reload_asked = False  # the reload key was pressed: say what the next full scan changed
        self._reload_from: Catalog | None = None
        self.other_flavor: OtherFlavorHint | None = None  # an empty memory dir: the other flavor's files
        self._shown: list[MemoryEntry] = []
        self._previewed: MemoryEntry | None = None  # the memory the preview shows
        self._preview_due = False  # a preview of the cursor's memory is scheduled
        self._preview_pause: Timer | None = None  # the preview waits for a pause in the typing
        self._frozen_catalog: Catalog | None = None  # the catalog `freeze_long_lived` last collected for
        self._listed_once = False  # a list has been filled in (the first one froze the heap)
        self._pending_select: str | None = None
        self._listed_view: tuple[object, ...] | None = None  # the filter, search and order last listed
        self._unsaved: Callable[[], None] | None = None  # a save being written: back to the editor if it is not
        self._scans = Latest()
        self.watch_files = watch
        self.verification: VerifyReport | None = None  # filled in by the verify worker
        self._searcher: CatalogSearch | None = None
        self._searches = Latest()  # the search shown; an older one's matches are dropped
        self._listed_search = 0  # the search whose first matches the table lists
        self._found: list[MemoryEntry] = []  # a worker search's matches so far, when sorted by use
        self.usage: UsageReport | None = None  # the agent's use of each memory (its transcripts)
        self._usage_index: UsageIndex | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="memories-toolbar"):
            yield Input(placeholder="Search name, description, body…  ( / )", id="memories-search")
            yield Select(TYPE_CHOICES, value="all", allow_blank=False, id="memories-type", compact=True)
        yield Static(id="memories-location")
        yield IndexGauge(id="memories-gauge")
        with Horizontal(id="memories-body"):
            yield MemoryTable(id="memories-table", zebra_stripes=True)
            with VerticalScroll(id="memories-preview"):
                yield Static(id="preview-fields")
                yield Static(id="preview-diagnostics")
                yield Markdown(id="preview-body")

    def on_mount(self) -> None:
        self.query_one("#memories-location", Static).update(self._location_text(0, 0))
        self.query_one("#memories-table", MemoryTable).used_of = self._used_of
        self.action_reload()

    def _used_of(self, entry: MemoryEntry) -> UsedKey | None:
        if self.usage is None:
            return None
        return used_key(self.usage.get(entry.relpath), self.usage.now, len(self.usage.sessions))

    def _location_text(self, strays: int, inbox: int) -> Text:
        loc = self.locations
        return assemble(
            ("memory dir ", tone("$muted")),
            (visible(shorten_home(loc.memory_dir)), "bold"),
            (f"  ({loc.memory_dir_source})", tone("$muted")),
            (f"  · {strays} file(s) the agent never reads (see memtui ls)" if strays else "", tone("$warning")),
            (f"  · {inbox} in the inbox (I)" if inbox else "", tone("bold $chip-text on $warning")),
            ("" if loc.auto_memory_enabled else "  auto memory is OFF for this project", tone("bold $error")),
        )

    # ----- loading ---------------------------------------------------------------------------

    def action_reload_asked(self) -> None:
        """Re-scan (the reload key): once the scan is complete, say what changed since the
        catalog shown now."""
        self._reload_from = self.catalog if self.catalog is not None and self.catalog.complete else None
        self._reload_asked = True
        self.action_reload()

    def action_reload(self) -> None:
        """Re-scan the memory dir in a worker."""
        self.loading = self.catalog is None
        self.scan(self._scans.take(), first=self.catalog is None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-scan")
    def scan(self, ticket: int, *, first: bool) -> None:
        """Scan off the UI thread; only posts messages, and none once a newer scan started
        (``ticket``). ``first``: the newest screenful first, then everything."""
        memory_dir = self.locations.memory_dir
        problem = memory_dir_problem(self.locations)
        if problem is not None:
            hint = other_flavor_hint(self.locations) if problem.code == "missing" else None
            self.post_if_current(self.CatalogFailed(problem, ticket, hint))
            return
        try:
            waiting = Inbox(self.locations.state_dir, memory_dir).count()
        except OSError:
            waiting = 0
        now = system_now()
        release = self.locations.flavor.behaviour
        fmt, warning_style = release.memory_format, release.instructions.index_warning
        # unchanged files come from the catalog database (parsed by an earlier scan, text read
        # on demand); its search index is filled afterwards, in the background
        db = CatalogDB.for_memory_dir(self.locations.state_dir, memory_dir, fmt=fmt)
        if first:
            # the newest screenful: from the database's newest rows when it has more (no walk of
            # the dir), else the newest files by stat
            batch = load_catalog(memory_dir, now, newest=FIRST_BATCH, cache=db, fmt=fmt, warning_style=warning_style)
            hint = other_flavor_hint(self.locations) if batch.complete and not batch.entries else None
            # (a dir the first batch holds whole: its search and claims use the database too)
            searcher = CatalogSearch([e.memory for e in batch.entries], db) if batch.complete else None
            if not self.post_if_current(self.CatalogLoaded(batch, waiting, ticket, searcher, other_flavor=hint)) or batch.complete:
                return
        catalog = load_catalog(memory_dir, now, cache=db, fmt=fmt, warning_style=warning_style)
        searcher = CatalogSearch([e.memory for e in catalog.entries], db)
        hint = other_flavor_hint(self.locations) if not catalog.entries else None
        self.post_if_current(self.CatalogLoaded(catalog, waiting, ticket, searcher, other_flavor=hint))

    def worker_failed(self, failure: Failure) -> None:
        """A scan that raised: the pane says so (the error line has the exception); a change
        that could not be written: the memories as they are on disk."""
        if failure.group == "memories-scan":
            self.loading = False
            self._show_nothing("Cannot show the memories.", f"{self.locations.memory_dir}\ncould not be scanned.")
        elif failure.group == "memories-apply":
            self.applying = False
            self.action_reload()
            self._back_to_editor()

    def _back_to_editor(self) -> None:
        """A save that was not written: the editor again, with the text typed."""
        unsaved, self._unsaved = self._unsaved, None
        if unsaved is not None:
            unsaved()

    @on(CatalogLoaded)
    def _on_loaded(self, message: CatalogLoaded) -> None:
        if not self._scans.is_current(message.ticket):
            return  # a newer scan is on its way
        self.loading = False
        self.other_flavor = message.other_flavor
        if self._reload_asked and message.catalog.complete:
            self._reload_asked = False
            before, after = self._reload_from, message.catalog
            changes = catalog_changes(before, after).describe() if before is not None else "first full scan"
            self.report_reload(f"{counted(len(after.entries), 'memory', 'memories')} in {shorten_home(after.memory_dir)}", changes)
        self.catalog = message.catalog
        self._searcher = message.searcher
        if message.searcher is not None and message.searcher.db is not None:
            self.fill_search_index(message.searcher)
        self.query_one(IndexGauge).show_report(message.catalog.index)
        self.refresh_table()
        self.call_after_refresh(self.query_one("#memories-table", MemoryTable).check_width)  # the real width may differ
        strays = len(message.catalog.diagnostics)
        self.query_one("#memories-location", Static).update(self._location_text(strays, message.inbox))
        if self.watch_files and not any(w.group == "memories-watch" for w in self.workers):
            self.watch_memory_dir()
        if message.catalog.complete:
            self.verify_claims(message.catalog, message.searcher.db if message.searcher is not None else None)
            self.load_usage(message.catalog)

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-verify")
    def verify_claims(self, catalog: Catalog, db: CatalogDB | None = None) -> None:
        """Check the memories' claims about the code off the UI thread (the project's files
        listed and read once, time-bounded); the preview's "claims" line fills in when done.
        ``db``: the catalog database ``catalog`` was read with (the claims it keeps)."""
        memories = [e.memory for e in catalog.entries]
        # the claims of unchanged files come from the catalog database the scan read (the
        # doctor's and the dream's too), not from their text read again
        claims = stated_claims(memories, db if db is not None and db.enabled else None)
        report = verify_memories(memories, verify_root(self.locations), exclude=[self.locations.memory_dir], claims=claims)
        self.post_if_current(self.Verified(catalog, report))

    @on(Verified)
    def _on_verified(self, message: Verified) -> None:
        if message.catalog is not self.catalog:
            return  # a newer scan is on its way, with its own check
        self.verification = message.report
        if self._previewed is not None and self._claims_of(self._previewed) is not None:
            self._previewed = None
            self._schedule_preview()

    def _claims_of(self, entry: MemoryEntry) -> MemoryVerification | None:
        if self.verification is None:
            return None
        mv = self.verification.memories.get(entry.relpath)
        return mv if mv is not None and mv.results else None

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-usage")
    def load_usage(self, catalog: Catalog) -> None:
        """Read the agent's transcripts (only what changed since the last time) off the UI
        thread, after the memories of ``catalog`` are listed; posts ``UsageLoaded`` unless a
        newer read started."""
        from memtui.core.sessions.usage import UsageIndex

        worker = get_current_worker()
        if self._usage_index is None:
            self._usage_index = UsageIndex(self.locations)
        self._usage_index.refresh(cancelled=lambda: worker.is_cancelled)
        existing = [e.relpath for e in catalog.entries]
        if not worker.is_cancelled:
            self.post_if_current(self.UsageLoaded(self._usage_index.report(system_now(), existing=existing)))

    @on(UsageLoaded)
    def _on_usage(self, message: UsageLoaded) -> None:
        self.usage = message.report
        self.refresh_table()

    def on_unmount(self) -> None:
        thaw()  # whatever outlives the pane (a test run, a benchmark) is collectable again

    @on(CatalogFailed)
    def _on_failed(self, message: CatalogFailed) -> None:
        if not self._scans.is_current(message.ticket):
            return
        self.loading = False
        problem = message.problem
        if problem.code == "not-a-directory":
            self._show_nothing("Cannot show the memories.", f"{problem.memory_dir}\n{problem.what}")
            return
        reason = f"{problem.memory_dir}\n{problem.what}"
        if message.other_flavor is not None:
            reason += "\n\n" + self._other_flavor_text(message.other_flavor)
        self._show_nothing("No memories yet.", reason)

    def _other_flavor_text(self, hint: OtherFlavorHint) -> str:
        """What the other flavor has here, and the key and the flag that switch to it."""
        flavor = self.locations.flavor.name
        has = f"Its memory dir has memories:\n{hint.memory_dir}" if hint.memory_dir is not None else "Found: " + ", ".join(hint.files[:4])
        return (
            f"This is the {flavor} flavor ({self.app_choice_reason()}), but the {hint.name} flavor has files "
            f"for this project. {has}\n\nPress ctrl+f to switch to {hint.name} (or run memtui --flavor {hint.name})."
        )

    def app_choice_reason(self) -> str:
        """Why the app uses this flavor (the app's ``choice``), e.g. ``--flavor agent``."""
        choice = getattr(self.app, "choice", None)
        return str(choice.reason) if choice is not None else f"--flavor {self.locations.flavor.name}"

    def _show_nothing(self, title: str, reason: str) -> None:
        """No catalog to show: an empty list, and ``title`` and ``reason`` in the preview."""
        self.catalog = None
        self._shown = []
        self._previewed = None
        self.query_one("#memories-table", MemoryTable).show_memories([])
        self.query_one(IndexGauge).show_report(None)
        self.query_one("#preview-fields", Static).update(assemble((f"{title}\n\n", "bold"), (visible_block(reason), tone("$soft"))))

    # ----- filtering -------------------------------------------------------------------------

    @on(Input.Changed, "#memories-search")
    def _on_search(self, event: Input.Changed) -> None:
        self.search = event.value

    @on(Select.Changed, "#memories-type")
    def _on_type(self, event: Select.Changed) -> None:
        chosen = next((f for f in TYPE_FILTERS if f == event.value), None)
        if chosen is not None:
            self.type_filter = chosen

    def watch_search(self) -> None:
        self.refresh_table()

    def watch_type_filter(self, value: TypeFilter) -> None:
        select = self.query_one("#memories-type", Select)
        if select.value != value:
            # no Select.Changed back: two quick `t` would otherwise bounce between their values
            with select.prevent(Select.Changed):
                select.value = value
        self.refresh_table()

    @on(Input.Submitted, "#memories-search")
    def _on_search_submitted(self) -> None:
        self.query_one("#memories-table", DataTable).focus()

    def action_to_table(self) -> None:
        """Down in the search box: to the table, the search kept (elsewhere: not this key's job)."""
        if self.app.focused is not self.query_one("#memories-search", Input):
            raise SkipAction()
        self.query_one("#memories-table", DataTable).focus()

    def action_focus_search(self) -> None:
        self.query_one("#memories-search", Input).focus()

    def action_back(self) -> None:
        """esc: out of the search box to the list, the search kept; again: clear the search."""
        if not self.escape_text_box():
            self.query_one("#memories-table", DataTable).focus()

    def action_cycle_sort(self) -> None:
        """Newest first → most used → least used (never used first)."""
        self.sort_by = USE_SORTS[(USE_SORTS.index(self.sort_by) + 1) % len(USE_SORTS)]
        self.notify(f"Sorted: {self.sort_by.replace('-', ' ')}" + ("" if self.usage is not None or self.sort_by == "newest" else " (once the transcripts are read)"), timeout=3)

    def action_toggle_never_used(self) -> None:
        """Only the memories without a use in the sessions on record (or all of them again)."""
        self.never_used = not self.never_used

    def watch_sort_by(self) -> None:
        self.refresh_table()

    def watch_never_used(self) -> None:
        self.refresh_table()

    def action_cycle_type(self) -> None:
        self.type_filter = TYPE_FILTERS[(TYPE_FILTERS.index(self.type_filter) + 1) % len(TYPE_FILTERS)]

    @property
    def shown(self) -> list[MemoryEntry]:
        """The entries currently listed, in table order."""
        return list(self._shown)

    def refresh_table(self) -> None:
        """Rebuild the rows from the catalog, the type filter, the search and the use filter and
        order, keeping the selected memory selected when it is still listed. A search of a large
        catalog runs in a worker (``search_catalog``) and lists its matches as they come (sorted
        by use: once they are all in)."""
        if not self.is_mounted or self.catalog is None:
            return
        ticket = self._searches.take()
        wanted = MemoryFilter.of(self.type_filter, self.search)
        entries = self.catalog.entries
        if wanted.terms and len(entries) > SYNC_SEARCH_MAX:
            allowed: list[int] | None = None
            if wanted.type != "all" or (self.never_used and self.usage is not None):
                typed = [e for e in entries if wanted.type_matches(e)]
                kept = {id(e) for e in by_use(typed, self.usage, never_used=self.never_used)}
                allowed = [i for i, e in enumerate(entries) if id(e) in kept]
            searcher = self._searcher or CatalogSearch([e.memory for e in entries], None)
            self._found = []
            self.search_catalog(ticket, searcher, self.search, allowed)
            return
        self._list(by_use(wanted.apply(entries), self.usage, sort=self.sort_by, never_used=self.never_used), done=True)

    def _list(self, shown: list[MemoryEntry], *, done: bool) -> None:
        """Show ``shown`` in the table (``done``: every match is in)."""
        assert self.catalog is not None
        table = self.query_one("#memories-table", MemoryTable)
        selected = self._pending_select or self._selected_relpath()
        self._pending_select = None
        scroll_y = table.scroll_y
        view = (self.type_filter, self.search, self.sort_by, self.never_used)
        same_view, self._listed_view = view == self._listed_view, view
        was_at = table.cursor_row if self._shown else 0
        self._shown = shown
        rows = [e.relpath for e in self._shown]
        if selected in rows:
            keep = rows.index(selected)
        elif same_view and shown:
            # the memory is gone (deleted, or it left the filter): the row that took its place,
            # the one before when it was the last
            keep = min(max(was_at, 0), len(shown) - 1)
        else:
            keep = 0  # another filter or search: its first match
        table.show_memories(self._shown)
        self._title(done)
        self._previewed = None  # the catalog or the filter changed: show the preview again
        if self._shown:
            table.move_cursor(row=keep, scroll=False)
            table.scroll_to(y=scroll_y, animate=False, immediate=True)
            table.move_cursor(row=table.cursor_row)  # keep the cursor visible
        if self._preview_pause is not None:
            self._preview_pause.stop()
            self._preview_pause = None
        if self.app.focused is self.query_one("#memories-search", Input):
            # typing: the list follows each key, the preview (a Markdown body to lay out) a pause
            self._preview_pause = self.set_timer(PREVIEW_AFTER_TYPING, self._schedule_preview)
        else:
            self._schedule_preview()

    def _title(self, done: bool) -> None:
        assert self.catalog is not None
        table = self.query_one("#memories-table", MemoryTable)
        total = len(self.catalog.entries)
        if not self.catalog.complete:
            table.border_title = f"newest {total:,} of {counted(self.catalog.total, 'memory', 'memories')} · reading the rest…"
        elif not done:
            table.border_title = f"{len(self._shown):,}… of {counted(total, 'memory', 'memories')} · searching"
        elif self._shown or not total:
            table.border_title = f"{len(self._shown):,} of {counted(total, 'memory', 'memories')}" + self._usage_title()
        else:
            table.border_title = f"no memory matches (of {total:,})"

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-search")
    def search_catalog(self, ticket: int, searcher: CatalogSearch, query: str, allowed: list[int] | None) -> None:
        """Search off the UI thread; posts the matches in chunks. A newer search cancels this
        one (``exclusive``, ``ticket``): the latest query wins."""
        worker = get_current_worker()
        searches = self._searches

        class _Superseded:
            def is_set(self) -> bool:
                return worker.is_cancelled or not searches.is_current(ticket)

        superseded = _Superseded()
        drawn: threading.Event | None = threading.Event()
        for chunk in searcher.search(query, allowed, superseded):  # type: ignore[arg-type]
            if not self.post_if_current(self.SearchFound(ticket, chunk.positions, chunk.done, drawn)):
                return
            if drawn is not None:
                # the first matches are drawn before the rest are looked for: the search
                # would otherwise hold the interpreter while the UI thread draws them
                while not drawn.wait(FIRST_DRAW_WAIT) and not superseded.is_set():
                    pass
                drawn = None

    @on(SearchFound)
    def _on_found(self, message: SearchFound) -> None:
        if message.drawn is not None:
            self.call_after_refresh(message.drawn.set)
        if not self._searches.is_current(message.ticket) or self.catalog is None:
            return  # an older query's matches
        entries = self.catalog.entries
        found = [entries[p] for p in message.positions]
        if self.usage is not None and self.sort_by != "newest":  # listed once all are in, by use
            self._found.extend(found)
            if message.done:
                self._listed_search = message.ticket
                self._list(by_use(self._found, self.usage, sort=self.sort_by), done=True)
            return
        if self._listed_search != message.ticket:  # its first chunk: a new list
            self._listed_search = message.ticket
            self._list(found, done=message.done)
            return
        self._shown.extend(found)
        self.query_one("#memories-table", MemoryTable).more_memories()
        self._title(message.done)

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-index")
    def fill_search_index(self, searcher: CatalogSearch) -> None:
        """Add the memories the catalog database's search index lacks, a batch at a time
        (searches meanwhile read those memories instead)."""
        worker = get_current_worker()
        while not worker.is_cancelled and searcher.index_pending():
            pass

    def _usage_title(self) -> str:
        parts = []
        if self.never_used:
            parts.append("never used")
        if self.sort_by != "newest":
            parts.append(self.sort_by.replace("-", " ") + " first")
        return "".join(f" · {p}" for p in parts)

    @on(MemoryTable.Filled)
    def _on_filled(self, message: MemoryTable.Filled) -> None:
        if message.rows >= FREEZE_AT:
            # a full collection (~0.1-0.3 s at 20,000) once per catalog; a search only freezes
            freeze_long_lived(collect=self.catalog is not self._frozen_catalog)
            self._frozen_catalog = self.catalog
        elif not self._listed_once:
            # the first list ends the work of startup (the app froze what the first paint had):
            # what the scan and its rows built is kept out of full passes too
            freeze_long_lived(collect=False)
        self._listed_once = True

    @on(MemoryTable.Refit)
    def _refit(self) -> None:
        """Rebuild the rows: the memory column's width changed (a resize, the first layout)."""
        self.refresh_table()

    def _selected_relpath(self) -> str | None:
        entry = self.selected_entry()
        return entry.relpath if entry else None

    # ----- preview ---------------------------------------------------------------------------

    @on(DataTable.RowHighlighted, "#memories-table")
    def _schedule_preview(self) -> None:
        """The preview follows the cursor after the table is drawn: the cursor moves at once, and
        keys pressed faster than a preview renders (a held pagedown) cost one preview, not one
        per key."""
        if not self._preview_due:
            self._preview_due = True
            self.call_after_refresh(self._preview_selected)

    async def _preview_selected(self) -> None:
        """Show the preview of the memory under the cursor, unless it shows already: fields,
        diagnostics and body drawn together, once the body's Markdown is ready."""
        self._preview_due = False
        if not self.is_attached or not self.query_children("#memories-body"):  # being removed (a flavor switch), children first
            return
        entry = self.selected_entry()
        if entry is not None and entry is self._previewed:
            return
        self._previewed = entry
        with self.app.batch_update():
            await self.show_preview(entry)

    def show_preview(self, entry: MemoryEntry | None) -> AwaitComplete:
        """Show ``entry``'s frontmatter fields, diagnostics and rendered body (awaitable: the
        body's Markdown is parsed and mounted after this returns)."""
        fields = self.query_one("#preview-fields", Static)
        diags = self.query_one("#preview-diagnostics", Static)
        body = self.query_one("#preview-body", Markdown)
        preview = self.query_one("#memories-preview", VerticalScroll)
        if entry is None:
            preview.border_title = "preview"
            if self.other_flavor is not None and self.catalog is not None and not self.catalog.entries:
                fields.update(assemble(("No memories here.\n\n", "bold"), (visible_block(self._other_flavor_text(self.other_flavor)), tone("$soft"))))
            else:
                fields.update(styled("No memory matches the filter.", style=tone("$soft")))
            diags.update("")
            return body.update("")
        mem = entry.memory
        preview.border_title = markup_safe(mem.relpath)
        mtime = datetime.fromtimestamp(mem.mtime, UTC).strftime("%Y-%m-%d %H:%M")
        grid = Table.grid(padding=(0, 1))
        muted = tone("$muted")
        grid.add_column(style=tone(muted), width=12, no_wrap=True, overflow="ellipsis")
        grid.add_column(overflow="fold")
        grid.add_row("name", plain(_cap(mem.name)) if mem.name else styled("—", style=muted))
        grid.add_row(
            "description",
            plain(_cap(mem.description)) if mem.description else styled("— recall has nothing to match on", style=tone("$warning")),
        )
        type_text = assemble(type_badge(mem.type, mem.declared_type))  # no base style: no fill
        if mem.type is None and mem.declared_type:
            type_text = assemble(type_text, (" not recognised by the agent", tone("$error")))
        grid.add_row("type", type_text)
        grid.add_row("saved", assemble(age_badge(entry.age_label, entry.age_band), (f" · {mtime}", muted)))
        grid.add_row("size", f"{mem.size:,} bytes")
        uses = self._usage_index.uses_of(mem.relpath) if self._usage_index is not None and self.usage is not None else []
        usage = self.usage.get(mem.relpath) if self.usage is not None else None
        grid.add_row("used", usage_summary(usage, self.usage))
        if uses:
            grid.add_row("", uses_block(uses))
        index_name = "team/MEMORY.md" if mem.team else "MEMORY.md"
        grid.add_row(
            "index",
            styled(f"linked from {index_name}", style=tone("$success")) if entry.in_index else styled(f"not in {index_name}", style=tone("$info")),
        )
        for key, value in mem.frontmatter.items():
            if key not in ("name", "description", "type"):
                grid.add_row(plain(key), plain(_cap(_show_value(value))))
        claims = self._claims_of(entry)
        if claims is not None:
            ok = not claims.stale and claims.checked
            lines = [styled(claims.summary(), style=tone("$success" if ok else "$warning" if claims.stale else "$muted"))]
            lines.extend(plain(f"line {r.claim.line}: {r.message}", tone("$soft")) for r in claims.stale[:5])
            grid.add_row("claims", Text("\n").join(lines))
        parts: list[RenderableType] = [grid]
        if entry.stale_caveat:
            parts.append(styled("\n" + entry.stale_caveat, style=tone("italic $caution")))
        fields.update(Group(*parts))
        if entry.diagnostics:
            diag_text = Table.grid(padding=(0, 1))
            diag_text.add_column(no_wrap=True)
            diag_text.add_column(overflow="fold")
            for d in entry.diagnostics:
                where = f" · line {d.line}" if d.line else ""
                style = severity_style(d.severity)
                diag_text.add_row(
                    styled(SEVERITY_ICON[d.severity], style=style),
                    assemble((d.code, style), (where, muted), "\n", visible(d.message)),
                )
            diags.update(diag_text)
            diags.display = True
        else:
            diags.update("")
            diags.display = False
        text = mem.body.strip()
        if len(text) > PREVIEW_BODY_CHARS:
            text = text[:PREVIEW_BODY_CHARS] + f"\n\n_… {len(mem.body) - PREVIEW_BODY_CHARS:,} more characters (e to see all)_"
        return body.update(visible_block(text) or "_(empty body)_")

    # ----- editing (every change is a core Plan: conflict-checked, journaled, undoable) --------

    @property
    def journal(self) -> Journal:
        """The edit journal of this memory dir (in memtui's state dir)."""
        return Journal(self.locations.state_dir, self.locations.memory_dir)

    def selected_entry(self) -> MemoryEntry | None:
        """The memory under the cursor, or ``None``."""
        table = self.query_one("#memories-table", DataTable)
        if not self._shown or table.row_count == 0:
            return None
        return self._shown[min(table.cursor_row, len(self._shown) - 1)]

    def _need_selection(self) -> MemoryEntry | None:
        entry = self.selected_entry()
        if entry is None:
            self.notify("Select a memory first.", severity="warning")
        return entry

    def _make_plan(self, build: Callable[[], Plan]) -> Plan | None:
        """Build a plan; a user-caused problem becomes a notification, a conflict the dialog."""
        try:
            return build()
        except EditError as exc:
            self.notify(str(exc), severity="warning")
        except ConflictError as exc:
            self.notify(f"{exc} — reloaded; try again.", severity="warning", timeout=8)
            self.action_reload()
        except OSError as exc:
            self.notify(f"{exc.strerror or exc}: {exc.filename or ''}", title="Cannot read", severity="error")
        return None

    def apply(self, plan: Plan, *, select: str | None = None, preview: bool = False, unsaved: Callable[[], None] | None = None) -> None:
        """Apply ``plan`` in a worker (after a preview when asked or when the index cap would be
        passed); ``select``: the memory to put the cursor on after the re-scan; ``unsaved``: for
        a plan that saves typed text, what brings the editor back with it — called when the plan
        is not written (cancelled at the preview, a conflict, a failed write), so no typing is
        lost."""

        def go(confirmed: bool | None = True) -> None:
            if confirmed:
                self.applying = True
                self._unsaved = unsaved
                self.apply_worker(plan, select)
            elif unsaved is not None:
                unsaved()

        if preview or plan.index_overflow:
            self.app.push_screen(PlanPreview(plan), go)
        else:
            go()

    @work(thread=True, exclusive=False, exit_on_error=False, group="memories-apply")
    def apply_worker(self, plan: Plan, select: str | None) -> None:
        """Write ``plan`` off the UI thread: the write path takes the memory dir's lock, which
        the CLI, the Stop hook or a dream may hold."""
        try:
            entry = apply_plan(self.locations.memory_dir, plan, self.journal, system_now())
        except ConflictError as exc:
            self.post_message(self.Conflicted(str(exc)))
        except (ApplyError, OSError) as exc:
            raise WorkFailed("Not saved", str(exc)) from exc
        else:
            left = undoable_entries(self.journal) if entry.action == "undo" else []
            self.post_message(self.Applied(entry, select, left[0].title if left else None))

    @on(Applied)
    def _on_applied(self, message: Applied) -> None:
        self.applying = False
        self._unsaved = None
        entry = message.entry
        if entry.action == "undo":  # u again walks further back; there is no redo
            then = f"u undoes “{message.next_undo}” before it" if message.next_undo else "nothing before it to undo"
            self.notify(f"{entry.title.removeprefix('Undo: ')}  ·  {then}", title="Undone")
        else:
            # a save and a creation say so in words; every change says how to undo it
            title = {"edit": "Saved", "create": "Created"}.get(entry.action, "Done")
            self.notify(f"{entry.title}  ·  u to undo", title=title)
        if message.select:
            self._pending_select = message.select
        self.action_reload()

    @on(Conflicted)
    def _on_conflicted(self, message: Conflicted) -> None:
        self.applying = False
        self.notify(f"{message.reason}. Reloaded.", severity="warning", timeout=8)
        self.action_reload()
        self._back_to_editor()  # saving again asks what to do about the change on disk

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a change is being written, the keys that make another one wait (dimmed)."""
        if self.applying and action in ("edit", "edit_external", "retype", "rename", "new", "delete", "undo", "trash"):
            return None
        return True

    def watch_applying(self) -> None:
        self.refresh_bindings()

    def _write_refused(self, mem: Memory) -> bool:
        """Say why memtui will not write ``mem`` (a link out of the memory dir not confirmed,
        a file it read only the start of), before any typing is lost; ``False``: it may."""
        try:
            why = edit_refusal(self.locations.memory_dir, self.journal.base, mem)
        except OSError:  # no state dir to read the confirmed links from: the write path decides
            why = None
        if why is None:
            return False
        self.notify(visible(f"{mem.relpath}: {why}"), title="Not editable here", severity="warning", markup=False)
        return True

    def action_edit(self) -> None:
        entry = self._need_selection()
        if entry is None:
            return
        mem = entry.memory
        if self._write_refused(mem):
            return

        editor = EditorScreen(mem.relpath, mem.text)

        def saved(text: str | None) -> None:
            if text is not None:
                self._save_text(mem, text, editor)

        self.app.push_screen(editor, saved)

    def _save_text(self, mem: Memory, text: str, editor: EditorScreen | None = None) -> None:
        """Save ``text`` as ``mem``; when it is not written, back to an editor that goes on
        from ``editor`` (the one it was typed in: its cursor and undo history)."""
        fmt = self.locations.flavor.behaviour.memory_format
        try:
            plan = plan_save(self.locations.memory_dir, mem, text, fmt)
        except EditError as exc:
            if text == mem.text:  # nothing typed to keep
                self.notify(str(exc), severity="warning")
                return
            self.notify(f"{exc} — your text is still in the editor", title="Not saved", severity="warning", timeout=8)
            self._edit_again(mem, text, editor)
            return
        except ConflictError:
            self._resolve_conflict(mem, text)
            return
        except OSError as exc:  # the file became unreadable (a folder, no permission): keep the text
            self.notify(f"{exc.strerror or exc} — your text is still in the editor", title="Not saved", severity="error")
            self._edit_again(mem, text, editor)
            return
        self._save_plan(plan, mem, text, editor)

    def _save_plan(self, plan: Plan, mem: Memory, text: str, editor: EditorScreen | None = None) -> None:
        """Apply a save; when it would make the agent lose a name, description or type, show
        what is lost first and ask (Cancel: back to the editor, the text kept)."""
        def unsaved() -> None:
            self._edit_again(mem, text, editor)

        if not plan.losses:
            self.apply(plan, select=mem.relpath, unsaved=unsaved)
            return

        def confirmed(ok: bool | None) -> None:
            if ok:
                self.apply(plan, select=mem.relpath, unsaved=unsaved)
            else:
                self._edit_again(mem, text, editor)

        self.app.push_screen(PlanPreview(plan, confirm_label="Save anyway"), confirmed)

    def _edit_again(self, mem: Memory, text: str, before: EditorScreen | None = None) -> None:
        """Back to the editor with ``text`` (not saved yet), where the user was in ``before``."""
        editor = EditorScreen(mem.relpath, text, saved=mem.text, resume=before)

        def saved(edited: str | None) -> None:
            if edited is not None:
                self._save_text(mem, edited, editor)

        self.app.push_screen(editor, saved)

    def _resolve_conflict(self, mem: Memory, text: str, diff: str | None = None) -> None:
        disk = read_memory(mem.path, self.locations.memory_dir, self.locations.flavor.behaviour.memory_format)

        def reload(drop: bool | None) -> None:
            if drop:
                self.action_reload()
            else:
                self._resolve_conflict(mem, text, diff)

        def chosen(choice: str | None) -> None:
            if choice == "reload":
                # the edit is lost on reload: say so and ask
                self.app.push_screen(
                    DiscardDialog(f"Drop your edit of {mem.relpath} and reload it from disk?", confirm_label="Drop and reload", keep_label="Back"),
                    reload,
                )
            elif choice == "keep":
                # plan against what is on disk now: the journal keeps it as the backup
                fmt = self.locations.flavor.behaviour.memory_format
                plan = self._make_plan(lambda: plan_save(self.locations.memory_dir, disk, text, fmt))
                if plan:
                    self._save_plan(plan, disk, text)
                else:  # said why; the text is kept
                    self._edit_again(disk, text)
            elif choice == "diff":
                change = FileChange(mem.relpath, disk.text.encode("utf-8"), text.encode("utf-8"))
                self._resolve_conflict(mem, text, change.diff())
            elif choice == "cancel":
                self._edit_again(mem, text)

        self.app.push_screen(ConflictDialog(mem.relpath, diff), chosen)

    def action_edit_external(self) -> None:
        entry = self._need_selection()
        if entry is None:
            return
        mem = entry.memory
        if self._write_refused(mem):
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        scratch_dir = self.locations.state_dir / "editing"
        scratch_dir.mkdir(parents=True, exist_ok=True)
        scratch = scratch_dir / Path(mem.relpath).name
        scratch.write_bytes(mem.text.encode("utf-8", errors="surrogateescape"))
        try:
            with self.app.suspend():
                subprocess.run([*shlex.split(editor), str(scratch)], check=False)
        except (OSError, ValueError) as exc:
            self.notify(f"cannot run {editor!r}: {exc}", title="Editor", severity="error")
            return
        try:  # no newline translation
            text = read_text_regular(scratch, MAX_MEMORY_BYTES, errors="surrogateescape")
        except OSError as exc:
            self.notify(visible(f"cannot read the edited text back: {exc.strerror or exc}"), title="Editor", severity="error", markup=False)
            return
        scratch.unlink(missing_ok=True)
        if text != mem.text:
            self._save_text(mem, text)

    def action_retype(self) -> None:
        entry = self._need_selection()
        if entry is None:
            return
        mem = entry.memory

        def picked(mem_type: MemoryType | None) -> None:
            if mem_type:
                fmt = self.locations.flavor.behaviour.memory_format
                plan = self._make_plan(lambda: plan_retype(self.locations.memory_dir, mem, mem_type, fmt))
                if plan:
                    self.apply(plan, select=mem.relpath, preview=True)

        self.app.push_screen(TypePicker(mem.type or mem.declared_type, mem.relpath), picked)

    def action_rename(self) -> None:
        entry = self._need_selection()
        if entry is None:
            return
        mem = entry.memory

        def named(new: str | None) -> None:
            if new and new.strip() != mem.relpath:
                plan = self._make_plan(lambda: plan_rename(self.locations.memory_dir, mem, new))
                if plan:
                    self.apply(plan, select=plan.changes[-2].relpath if len(plan.changes) > 1 else None, preview=True)

        def refused(new: str) -> str | None:
            if not new.strip():
                return "a file name is required (esc keeps the old name)"
            if new.strip() == mem.relpath:
                return None
            try:
                plan_rename(self.locations.memory_dir, mem, new)
            except EditError as exc:
                return str(exc)
            except (ConflictError, OSError):
                return None  # said when the rename is made (a conflict reloads)
            return None

        prompt = TextPrompt(f"Rename {mem.relpath}", mem.relpath, hint="a path ending in .md, relative to the memory dir", action="renames", check=refused)
        self.app.push_screen(prompt, named)

    def action_new(self) -> None:
        """Type, name and description; then the editor on the type's template. Nothing is
        written (no file, no index entry) until the body is written and saved."""

        def created(result: tuple[MemoryType, str, str] | None) -> None:
            if result:
                mem_type, name, description = result
                draft = self._make_plan(lambda: plan_create(self.locations.memory_dir, mem_type, name, description))
                if draft:
                    first = draft.changes[0]
                    self._write_new(first.relpath, (first.after or b"").decode("utf-8"), None)

        self.locations.memory_dir.mkdir(parents=True, exist_ok=True)
        self.app.push_screen(NewMemoryDialog(), created)

    def _write_new(self, relpath: str, draft: str, text: str | None, before: EditorScreen | None = None) -> None:
        """The editor on a new memory (``draft``: as the dialog made it; ``text``: what was
        typed so far, in ``before``); ctrl+s creates it with its index entry, esc drops it."""
        title = f"new memory {relpath} — written when you save (ctrl+s) · esc drops it"
        editor = EditorScreen(relpath, draft if text is None else text, saved=draft, title=title, resume=before)

        def saved(edited: str | None) -> None:
            if edited is None:
                return
            fmt = self.locations.flavor.behaviour.memory_format
            try:
                plan = plan_create_text(self.locations.memory_dir, relpath, edited, fmt)
            except EditError as exc:
                self.notify(f"{exc} — your text is still in the editor", title="Not created", severity="warning", timeout=8)
                self._write_new(relpath, draft, edited, editor)
                return
            self.apply(plan, select=relpath, unsaved=lambda: self._write_new(relpath, draft, edited, editor))

        self.app.push_screen(editor, saved)

    def action_delete(self) -> None:
        entry = self._need_selection()
        if entry is None:
            return
        plan = self._make_plan(lambda: plan_delete(self.locations.memory_dir, entry.memory))
        if plan is None:
            return

        def confirmed(ok: bool | None) -> None:
            if ok:
                self.apply(plan)

        self.app.push_screen(PlanPreview(plan, confirm_label="Move to trash"), confirmed)

    def action_undo(self) -> None:
        try:
            plan = undo_plan(self.locations.memory_dir, self.journal)
        except ConflictError as exc:
            # pressing u again meets the same change: say how to undo an older one instead
            self.notify(f"{exc}. Nothing was written. `memtui undo --list` lists the changes; `memtui undo ID` undoes an older one.",
                        title="Undo stops here", severity="warning", timeout=12)
            return
        except (EditError, OSError):
            plan = self._make_plan(lambda: undo_plan(self.locations.memory_dir, self.journal))
        if plan:
            self.apply(plan, preview=True)

    def action_trash(self) -> None:
        def chosen(item: TrashItem | None) -> None:
            if item is not None:
                plan = self._make_plan(lambda: restore_plan(self.locations.memory_dir, self.journal, item))
                if plan:
                    self.apply(plan, select=item.relpath)

        try:
            items = trash(self.journal)
        except OSError as exc:  # the state dir: unreadable, or inside the memory dir
            self.notify(str(exc), title="Trash", severity="error")
            return
        self.app.push_screen(TrashDialog(items), chosen)

    def action_doctor(self) -> None:
        from memtui.tui.doctor import DoctorScreen

        def closed(changed: bool | None) -> None:
            if changed:
                self.action_reload()

        self.app.push_screen(DoctorScreen(self.locations), closed)

    def action_stores(self) -> None:
        from memtui.tui.stores import StoresScreen

        def closed(changed: bool | None) -> None:
            if changed:
                self.action_reload()

        self.app.push_screen(StoresScreen(self.locations), closed)

    def action_inbox(self) -> None:
        from memtui.tui.inbox import InboxScreen

        def closed(changed: bool | None) -> None:
            self.action_reload()

        try:
            screen = InboxScreen(self.locations)
        except OSError as exc:  # the state dir: unreadable, or inside the memory dir
            self.notify(str(exc), title="Inbox", severity="error")
            return
        self.app.push_screen(screen, closed)

    def action_source(self) -> None:
        """The conversation at a use of the memory (a list of its uses, newest first), else the
        conversation it came from."""
        entry = self._need_selection()
        if entry is None:
            return
        uses = self._usage_index.uses_of(entry.relpath) if self._usage_index is not None and self.usage is not None else []
        if not uses:
            self.read_source(entry)
            return

        def chosen(detail: UseDetail | None) -> None:
            if detail is not None:
                self.read_use(entry, detail)

        self.app.push_screen(UsesDialog(entry.relpath, uses), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-source")
    def read_use(self, entry: MemoryEntry, detail: UseDetail) -> None:
        """Read the conversation at one use of ``entry`` (a transcript: off the UI thread)."""
        from memtui.core.extract.excerpt import source_excerpt

        try:
            excerpt = source_excerpt(detail.transcript, detail.use.uuid, detail.session_id, sidechains=detail.subagent)
        except OSError as exc:
            raise WorkFailed("Cannot read the conversation", str(exc)) from exc
        title = f"{entry.relpath}: {detail.use.kind} in session {detail.session_id[:8]}" + (" (sub-agent)" if detail.subagent else "")
        self.post_if_current(self.SourceRead(title, excerpt))

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-source")
    def read_source(self, entry: MemoryEntry) -> None:
        """Read the conversation ``entry`` came from (a transcript: off the UI thread)."""
        from memtui.core.extract import memory_excerpt

        loc = self.locations
        try:
            excerpt = memory_excerpt(entry.memory, Inbox(loc.state_dir, loc.memory_dir), loc.sessions_dir)
        except OSError as exc:
            raise WorkFailed("Cannot read the source", str(exc)) from exc
        self.post_if_current(self.SourceRead(f"Where {entry.relpath} came from", excerpt))

    @on(SourceRead)
    def _on_source(self, message: SourceRead) -> None:
        from memtui.tui.inbox import SourceDialog

        self.app.push_screen(SourceDialog(message.title, message.excerpt))

    def extra_commands(self) -> Iterable[SystemCommand]:
        """A type filter by name (the ``t`` key cycles through them)."""
        for label, value in TYPE_CHOICES:
            name = "all" if value == "all" else label
            yield SystemCommand(f"Memories: show {name}", f"Filter the list to {name} memories", self.there(partial(setattr, self, "type_filter", value)))

    # ----- live reload -----------------------------------------------------------------------

    @work(exclusive=True, exit_on_error=False, group="memories-watch")
    async def watch_memory_dir(self) -> None:
        """Re-scan when files change outside memtui (an agent writing memory while you watch)."""
        from watchfiles import awatch

        memory_dir = self.locations.memory_dir
        if not memory_dir.is_dir():
            return
        async for _changes in awatch(memory_dir, debounce=300, step=100, recursive=True):
            self.post_message(self.DirChanged())

    @dataclass
    class DirChanged(Message):
        """Files changed below the memory dir."""

    @on(DirChanged)
    def _on_dir_changed(self) -> None:
        self.action_reload()

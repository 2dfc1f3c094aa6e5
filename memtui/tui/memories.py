"""The Memories pane: a typed browser with age badges, filter, search, preview and the index gauge."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.cells import cell_len, set_cell_size
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import DataTable, Input, Markdown, Select, Static

from memtui.core.catalog import Catalog, MemoryEntry, load_catalog
from memtui.core.clock import system_now
from memtui.core.locations import Locations
from memtui.core.memories import MEMORY_TYPES
from memtui.tui.badges import age_badge, type_badge
from memtui.tui.widgets.index_gauge import IndexGauge

TYPE_FILTERS: list[tuple[str, str]] = [("All types", "all"), *((t, t) for t in MEMORY_TYPES), ("untyped", "none")]
# (label, key, width): fixed widths so the description column gets what is left.
COLUMNS: list[tuple[str, str, int | None]] = [
    ("type", "type", 11),
    ("age", "age", 12),
    ("!", "problems", 2),
    ("memory", "memory", None),
]
_SEVERITY_ICON = {"error": "✖", "warning": "▲", "info": "●"}
_SEVERITY_STYLE = {"error": "bold #e06c75", "warning": "bold #e5c07b", "info": "#56b6c2"}


def matches(entry: MemoryEntry, type_filter: str, terms: list[str]) -> bool:
    """Whether ``entry`` passes the type filter and contains every search term (case-insensitive)
    in its name, description, path or body."""
    if type_filter != "all" and (entry.type or "none") != type_filter:
        return False
    if not terms:
        return True
    mem = entry.memory
    haystack = "\n".join(filter(None, (mem.name, mem.description, mem.relpath, mem.body))).casefold()
    return all(term in haystack for term in terms)


def _clip(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` cells with an ellipsis."""
    flat = " ".join(text.split())
    return flat if cell_len(flat) <= width else set_cell_size(flat, width - 1) + "…"


def shorten_home(path: Path) -> str:
    """``path`` with the home directory written as ``~``."""
    home = Path.home()
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


class MemoriesPane(Widget):
    """Browse the memories of one memory dir."""

    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="memories.search", tooltip="Search name, description and body"),
        Binding("t", "cycle_type", "Type filter", id="memories.type", tooltip="Cycle the type filter"),
        Binding("r", "reload", "Reload", id="memories.reload", tooltip="Re-scan the memory dir"),
        Binding("escape", "clear_search", "Clear", show=False, id="memories.clear", tooltip="Clear the search"),
    ]

    type_filter: reactive[str] = reactive("all")
    search: reactive[str] = reactive("")

    @dataclass
    class CatalogLoaded(Message):
        """A scan finished: the new catalog."""

        catalog: Catalog

    @dataclass
    class CatalogFailed(Message):
        """A scan could not run (the memory dir is missing or unreadable)."""

        memory_dir: Path
        reason: str

    def __init__(self, locations: Locations, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locations = locations
        self.catalog: Catalog | None = None
        self._shown: list[MemoryEntry] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="memories-toolbar"):
            yield Input(placeholder="Search name, description, body…  ( / )", id="memories-search")
            yield Select(TYPE_FILTERS, value="all", allow_blank=False, id="memories-type", compact=True)
        yield Static(id="memories-location")
        yield IndexGauge(id="memories-gauge")
        with Horizontal(id="memories-body"):
            table: DataTable[Text | str] = DataTable(id="memories-table", cursor_type="row", zebra_stripes=True)
            yield table
            with VerticalScroll(id="memories-preview"):
                yield Static(id="preview-fields")
                yield Static(id="preview-diagnostics")
                yield Markdown(id="preview-body")

    def on_mount(self) -> None:
        table = self.query_one("#memories-table", DataTable)
        for label, key, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        loc = self.locations
        self.query_one("#memories-location", Static).update(
            Text.assemble(
                ("memory dir ", "#5c6370"),
                (shorten_home(loc.memory_dir), "bold"),
                (f"  ({loc.memory_dir_source})", "#5c6370"),
                ("" if loc.auto_memory_enabled else "  auto memory is OFF for this project", "bold #e06c75"),
            )
        )
        self.action_reload()

    # ----- loading ---------------------------------------------------------------------------

    def action_reload(self) -> None:
        """Re-scan the memory dir in a worker."""
        self.loading = self.catalog is None
        self.scan()

    @work(thread=True, exclusive=True, exit_on_error=False, group="memories-scan")
    def scan(self) -> None:
        """Scan off the UI thread; only posts messages."""
        memory_dir = self.locations.memory_dir
        if not memory_dir.is_dir():
            reason = "does not exist yet — the agent creates it when it first saves a memory"
            self.post_message(self.CatalogFailed(memory_dir, reason))
            return
        self.post_message(self.CatalogLoaded(load_catalog(memory_dir, system_now())))

    @on(CatalogLoaded)
    def _on_loaded(self, message: CatalogLoaded) -> None:
        self.loading = False
        self.catalog = message.catalog
        self.query_one(IndexGauge).show_report(message.catalog.index)
        self.refresh_table()

    @on(CatalogFailed)
    def _on_failed(self, message: CatalogFailed) -> None:
        self.loading = False
        self.catalog = None
        self._shown = []
        self.query_one("#memories-table", DataTable).clear()
        self.query_one(IndexGauge).show_report(None)
        self.query_one("#preview-fields", Static).update(
            Text.assemble(("No memories yet.\n\n", "bold"), (f"{message.memory_dir}\n{message.reason}.", "#abb2bf"))
        )

    # ----- filtering -------------------------------------------------------------------------

    @on(Input.Changed, "#memories-search")
    def _on_search(self, event: Input.Changed) -> None:
        self.search = event.value

    @on(Select.Changed, "#memories-type")
    def _on_type(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.type_filter = event.value

    def watch_search(self) -> None:
        self.refresh_table()

    def watch_type_filter(self, value: str) -> None:
        select = self.query_one("#memories-type", Select)
        if select.value != value:
            select.value = value
        self.refresh_table()

    def action_focus_search(self) -> None:
        self.query_one("#memories-search", Input).focus()

    def action_clear_search(self) -> None:
        search = self.query_one("#memories-search", Input)
        search.value = ""
        self.query_one("#memories-table", DataTable).focus()

    def action_cycle_type(self) -> None:
        values = [v for _, v in TYPE_FILTERS]
        self.type_filter = values[(values.index(self.type_filter) + 1) % len(values)]

    @property
    def shown(self) -> list[MemoryEntry]:
        """The entries currently listed, in table order."""
        return list(self._shown)

    def refresh_table(self) -> None:
        """Rebuild the rows from the catalog, the type filter and the search, keeping the
        selected memory selected when it is still listed."""
        if not self.is_mounted or self.catalog is None:
            return
        table = self.query_one("#memories-table", DataTable)
        selected = self._selected_relpath()
        terms = self.search.casefold().split()
        self._shown = [e for e in self.catalog.entries if matches(e, self.type_filter, terms)]
        table.clear()
        desc_width = self._description_width()
        for entry in self._shown:
            mem = entry.memory
            problems = sum(1 for d in entry.diagnostics if d.severity != "info")
            name = _clip(mem.name or Path(mem.relpath).stem, desc_width)
            rest = desc_width - cell_len(name) - 2
            table.add_row(
                type_badge(mem.type, mem.declared_type),
                age_badge(entry.age_label, entry.age_band),
                Text(f"{problems}", style="bold #e5c07b") if problems else "",
                Text.assemble(
                    (name, "bold" if mem.name else "italic #abb2bf"),
                    ("  " + _clip(mem.description, rest) if mem.description and rest > 3 else "", "#abb2bf"),
                ),
                key=mem.relpath,
            )
        total = len(self.catalog.entries)
        table.border_title = f"{len(self._shown)} of {total} memories"
        if self._shown:
            rows = [e.relpath for e in self._shown]
            table.move_cursor(row=rows.index(selected) if selected in rows else 0)
            self.show_preview(self._shown[table.cursor_row])
        else:
            self.show_preview(None)

    def _description_width(self) -> int:
        table = self.query_one("#memories-table", DataTable)
        padding = 2 * table.cell_padding * len(COLUMNS)
        fixed = sum(w for _, _, w in COLUMNS if w) + padding + 2  # + 2: room for the scrollbar
        return max(12, table.scrollable_content_region.width - fixed)

    def on_resize(self) -> None:
        self.call_after_refresh(self.refresh_table)

    def _selected_relpath(self) -> str | None:
        table = self.query_one("#memories-table", DataTable)
        if not self._shown or table.row_count == 0:
            return None
        row = min(table.cursor_row, len(self._shown) - 1)
        return self._shown[row].relpath

    # ----- preview ---------------------------------------------------------------------------

    @on(DataTable.RowHighlighted, "#memories-table")
    def _on_highlight(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self._shown):
            self.show_preview(self._shown[event.cursor_row])

    def show_preview(self, entry: MemoryEntry | None) -> None:
        """Show ``entry``'s frontmatter fields, diagnostics and rendered body."""
        fields = self.query_one("#preview-fields", Static)
        diags = self.query_one("#preview-diagnostics", Static)
        body = self.query_one("#preview-body", Markdown)
        preview = self.query_one("#memories-preview", VerticalScroll)
        if entry is None:
            preview.border_title = "preview"
            fields.update(Text("No memory matches the filter.", style="#abb2bf"))
            diags.update("")
            body.update("")
            return
        mem = entry.memory
        preview.border_title = mem.relpath
        mtime = datetime.fromtimestamp(mem.mtime, UTC).strftime("%Y-%m-%d %H:%MZ")
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="#5c6370", max_width=12, overflow="fold")
        grid.add_column(overflow="fold")
        grid.add_row("name", mem.name or Text("—", style="#5c6370"))
        grid.add_row("description", mem.description or Text("— recall has nothing to match on", style="#e5c07b"))
        type_text = Text.assemble(type_badge(mem.type, mem.declared_type))  # no base style: no fill
        if mem.type is None and mem.declared_type:
            type_text = Text.assemble(type_text, (" not recognised by the agent", "#e06c75"))
        grid.add_row("type", type_text)
        grid.add_row("saved", Text.assemble(age_badge(entry.age_label, entry.age_band), (f" · {mtime}", "#5c6370")))
        grid.add_row("size", f"{mem.size:,} bytes")
        index_name = "team/MEMORY.md" if mem.team else "MEMORY.md"
        grid.add_row(
            "index",
            Text(f"linked from {index_name}", style="#98c379") if entry.in_index else Text(f"not in {index_name}", style="#56b6c2"),
        )
        for key, value in mem.frontmatter.items():
            if key not in ("name", "description", "type"):
                grid.add_row(key, Text(str(value)))
        parts: list[RenderableType] = [grid]
        if entry.stale_caveat:
            parts.append(Text("\n" + entry.stale_caveat, style="italic #d19a66"))
        fields.update(Group(*parts))
        if entry.diagnostics:
            diag_text = Table.grid(padding=(0, 1))
            diag_text.add_column(no_wrap=True)
            diag_text.add_column(overflow="fold")
            for d in entry.diagnostics:
                where = f" · line {d.line}" if d.line else ""
                diag_text.add_row(
                    Text(_SEVERITY_ICON[d.severity], style=_SEVERITY_STYLE[d.severity]),
                    Text.assemble((d.code, _SEVERITY_STYLE[d.severity]), (where, "#5c6370"), "\n", d.message),
                )
            diags.update(diag_text)
            diags.display = True
        else:
            diags.update("")
            diags.display = False
        body.update(mem.body.strip() or "_(empty body)_")

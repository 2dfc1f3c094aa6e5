"""The memory list of the Memories pane: a DataTable whose rows cost little until they are drawn.

A dir of 20,000 memories is a table of 20,000 rows. DataTable draws only the rows on screen, so a
row here holds what is cheap to hold: three badges shared by every row that shows the same one
(one per type, per age label, per problem count, kept as drawn segments) and a `MemoryCell` that
builds the name and description text when its row is drawn, not when it is added.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from memtui.core.base.terminal import visible
from memtui.core.memory.age import AgeBand
from memtui.core.memory.catalog import MemoryEntry
from memtui.core.memory.memories import MemoryType
from memtui.tui.badges import age_badge, team_badge, type_badge
from memtui.tui.pane import ForwardsWorkerFailures, Latest
from memtui.tui.theme import assemble, styled
from memtui.tui.widgets.usage_view import UsedKey, used_text

# Rows added at a time: the first chunk at once (more than any screen shows), the rest in chunks
# of this size while the cursor rests this long (seconds).
ROW_CHUNK = 400
FILL_IDLE = 0.15

# (label, key, width): fixed widths so the memory column gets what is left.
COLUMNS: list[tuple[str, str, int | None]] = [
    ("type", "type", 11),
    ("age", "age", 12),
    ("used", "used", 10),
    ("!", "problems", 2),
    ("memory", "memory", None),
]


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` cells with an ellipsis."""
    flat = " ".join(text.split())
    return flat if cell_len(flat) <= width else set_cell_size(flat, width - 1) + "…"


class OneLine:
    """A one-line ``Text`` drawn as its segments, without Rich's wrapping and justifying (which a
    cell already cut to its column never needs): half the cost of drawing a ``Text`` cell. The
    badges are shared by every row that shows the same one, so their segments are kept."""

    __slots__ = ("segments", "text")

    def __init__(self, text: Text) -> None:
        self.text = text
        self.segments: list[Segment] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.segments is None:
            self.segments = list(_segments(console, self.text))
        return self.segments

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.text.cell_len, self.text.cell_len)

    def __str__(self) -> str:
        return self.text.plain


def _segments(console: Console, text: Text) -> Iterable[Segment]:
    """``text``'s segments on one line (``Text.render`` leaves out the base style of a text
    without spans, so it is applied here)."""
    return Segment.apply_style(text.render(console, end=""), console.get_style(text.style) if text.style else None)


@lru_cache(maxsize=256)
def _type_cell(mem_type: MemoryType | None, declared: str | None) -> OneLine:
    return OneLine(type_badge(mem_type, declared))


@lru_cache(maxsize=1024)
def _age_cell(label: str, band: AgeBand) -> OneLine:
    return OneLine(age_badge(label, band))


@lru_cache(maxsize=64)
def _problems_cell(problems: int) -> OneLine:
    return OneLine(styled(f"{problems}", style="bold $warning") if problems else Text(""))


class MemoryCell:
    """The memory column of one row — team badge, name, description cut to ``width`` cells —
    built each time the row is drawn (DataTable keeps the drawn lines of the rows on screen)."""

    __slots__ = ("entry", "width")

    def __init__(self, entry: MemoryEntry, width: int) -> None:
        self.entry = entry
        self.width = width

    def text(self) -> Text:
        """The styled text of this cell."""
        mem = self.entry.memory
        team = team_badge() if mem.team else Text("")
        name = clip(visible(mem.name or Path(mem.relpath).stem), self.width - team.cell_len)
        rest = self.width - team.cell_len - cell_len(name) - 2
        return assemble(
            team,
            (name, "bold" if mem.name else "italic $soft"),
            ("  " + clip(visible(mem.description), rest) if mem.description and rest > 3 else "", "$soft"),
        )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        return _segments(console, self.text())  # one line, cut to the column already

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.width, self.width)  # the column's width, without building the text

    def __str__(self) -> str:
        return self.text().plain


@lru_cache(maxsize=4096)
def _used_cell(key: UsedKey | None) -> OneLine:
    return OneLine(styled("…", style="$muted") if key is None else used_text(*key))


# A memory's "used" cell: ``(uses, age of the last)``, ``None`` until the transcripts are read.
UsedOf = Callable[[MemoryEntry], "UsedKey | None"]


def memory_row(entry: MemoryEntry, width: int, used_of: UsedOf | None = None) -> tuple[OneLine, OneLine, OneLine, OneLine, MemoryCell]:
    """The cells of ``entry``'s row; its memory column ``width`` cells wide; ``used_of``: the
    "used" cell's text (the agent's use of it, from its transcripts; ``…`` until known)."""
    problems = sum(1 for d in entry.diagnostics if d.severity != "info")
    return (
        _type_cell(entry.memory.type, entry.memory.declared_type),
        _age_cell(entry.age_label, entry.age_band),
        _used_cell(used_of(entry) if used_of is not None else None),
        _problems_cell(problems),
        MemoryCell(entry, width),
    )


class MemoryTable(ForwardsWorkerFailures, DataTable[RenderableType]):
    """The list of memories, one row per memory; ``home`` / ``end`` go to the first / last one.

    `show_memories` adds the first rows at once and the rest in chunks after them (`ROW_CHUNK`),
    each once the cursor has rested `FILL_IDLE` seconds: 20,000 rows added in one go block the
    app for one to two seconds (DataTable measures every new cell), a chunk delays a key pressed
    meanwhile by at most its own time (~30-60 ms). All rows are there in a few seconds, so the
    scrollbar, the mouse wheel and ``end`` reach the last memory.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "scroll_top", "First", show=False, id="memories.first", tooltip="The first memory listed"),
        Binding("end", "scroll_bottom", "Last", show=False, id="memories.last", tooltip="The last memory listed"),
    ]

    @dataclass
    class Refit(Message):
        """The memory column's width changed since the rows were built: list them again."""

        table: MemoryTable

    @dataclass
    class Filled(Message):
        """Every memory listed has its row."""

        table: MemoryTable
        rows: int

    def __init__(self, *, id: str | None = None, zebra_stripes: bool = False) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=zebra_stripes)
        self._memories: list[MemoryEntry] = []
        self._row_width = 12  # the memory column's width the rows are built for
        self._moved_at = 0.0  # time.monotonic() of the last cursor move
        self._listings = Latest()  # the list shown: a fill of an older one stops
        self._end_row: int | None = None  # where `end` left the cursor while rows were missing
        self._listing = 0  # the ticket of the list shown
        self._filling = 0  # the listing a `_fill` worker is adding rows for (0: none)
        self.used_of: UsedOf | None = None  # the "used" cell of a memory (set by the pane)

    def on_mount(self) -> None:
        for label, key, width in COLUMNS:
            self.add_column(label, key=key, width=width)

    def memory_width(self) -> int:
        """Cells left for the memory column at the table's current width (at least 12)."""
        padding = 2 * self.cell_padding * len(COLUMNS)
        fixed = sum(w for _, _, w in COLUMNS if w) + padding + 2  # + 2: room for the scrollbar
        # content_region, not scrollable_content_region: the width must not depend on whether
        # the scrollbar happens to be shown yet when it is measured
        return max(12, self.content_region.width - fixed)

    def on_resize(self) -> None:
        """Once laid out at a new size: ask for the rows again if their width is stale (the
        table's own size, not its pane's: it settles after the pane's first layout)."""
        self.call_after_refresh(self.check_width)

    def check_width(self) -> None:
        """Post ``Refit`` when the memory column is no longer as wide as the rows were built."""
        if self._memories and self.memory_width() != self._row_width:
            self.post_message(self.Refit(self))

    @property
    def row_width(self) -> int:
        """The memory column's width (cells) the rows were built for."""
        return self._row_width

    def show_memories(self, memories: list[MemoryEntry], *, at_once: int = 0) -> None:
        """List ``memories`` (replacing the rows): the first `ROW_CHUNK` rows, or ``at_once``
        if more, now; the rest in chunks after them."""
        self.clear()
        self._memories = memories
        listing = self._listing = self._listings.take()
        self._end_row = None
        self._row_width = self.memory_width()
        self._moved_at = time.monotonic()
        self._add_rows_upto(max(ROW_CHUNK, at_once))
        if self.row_count < len(memories):
            self._filling = listing
            self._fill(listing)

    def more_memories(self) -> None:
        """The list handed to ``show_memories`` grew (a search found more): add their rows."""
        self._add_rows_upto(max(self.row_count, ROW_CHUNK))
        listing = self._listing
        if self.row_count < len(self._memories) and self._listings.is_current(listing) and self._filling != listing:
            self._filling = listing
            self._fill(listing)

    def _add_rows_upto(self, upto: int) -> None:
        missing = self._memories[self.row_count : upto]
        if not missing:
            return
        width = self._row_width
        self.add_rows(memory_row(entry, width, self.used_of) for entry in missing)
        if self.row_count == len(self._memories):
            if self._end_row is not None and self.cursor_row == self._end_row:
                self.move_cursor(row=self.row_count - 1)  # `end` was pressed before the last row was there
            self._end_row = None
            self.post_message(self.Filled(self, self.row_count))

    @work(exit_on_error=False, group="memory-rows")
    async def _fill(self, listing: int) -> None:
        """Add the rows after the first ones, a chunk at a time, each drawn before the next and
        only once the cursor has rested `FILL_IDLE` seconds; stop when another list replaces
        this one (a worker that ends, rather than a cancelled one: whoever waits for the app's
        workers is not handed a cancellation)."""
        try:
            while self._listings.is_current(listing) and self.row_count < len(self._memories):
                await self.wait_for_refresh()
                while self._end_row is None and (rested := time.monotonic() - self._moved_at) < FILL_IDLE:
                    await asyncio.sleep(FILL_IDLE - rested)
                if self._listings.is_current(listing):  # bigger chunks when `end` waits for the last row
                    self._add_rows_upto(self.row_count + ROW_CHUNK * (1 if self._end_row is None else 4))
        finally:
            if self._filling == listing:
                self._filling = 0

    @on(DataTable.RowHighlighted)
    def _note_move(self) -> None:
        self._moved_at = time.monotonic()

    def action_scroll_bottom(self) -> None:
        """Move to the last memory. While rows are still being added: to the last row so far,
        then — unless the cursor has left it meanwhile — to the last memory once every row is
        there (the rest are added without waiting for the cursor to rest)."""
        super().action_scroll_bottom()
        self._end_row = self.cursor_row if self.row_count < len(self._memories) else None

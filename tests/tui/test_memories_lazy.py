"""The Memories pane lists a large dir without waiting for it: the newest memories first, then
the whole dir; every listed memory is a row at once (made when drawn), and home / end / page
down reach the first / last / next memories of a list of any length."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.containers import VerticalScroll

from support.pilot import plain, settle

from memtui.tui.app import MemtuiApp
from memtui.tui.memories import MemoriesPane
from memtui.tui.widgets import memory_table
from memtui.tui.widgets.memory_table import MemoryTable


def drawn(table: MemoryTable) -> str:
    """The lines ``table`` draws now, as text."""
    return "\n".join(table.render_line(y).text for y in range(table.size.height))


async def test_every_memory_listed_is_a_row_at_once(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        table = app.query_one(MemoryTable)
        assert len(pane.shown) == 5
        table.show_memories(pane.shown[:2])
        assert table.row_count == 2
        table.show_memories(pane.shown)
        assert table.row_count == 5  # before any refresh
        names = [str(table.get_row_at(i)[4]) for i in range(5)]
        assert [n.split()[0] for n in names] == [(e.memory.name or "").split()[0] for e in pane.shown]
        await settle(pilot)
        assert table.border_title == "5 of 5 memories"


async def test_end_home_and_page_down_in_a_hundred_thousand_rows(make_app: Callable[[], MemtuiApp]) -> None:
    """A list of 100,000 (the demo's five memories over and over) is listed at once; ``end``
    lands on its last row and draws it, ``pagedown`` moves a screenful, ``home`` goes back."""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        table = app.query_one(MemoryTable)
        many = [pane.shown[i % 5] for i in range(100_000)]
        table.show_memories(many)
        table.focus()
        await pilot.pause()
        assert table.row_count == 100_000
        assert table.virtual_size.height == 100_001  # a line per row, and the header
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 99_999
        assert table.scroll_y == table.max_scroll_y > 99_000
        last = many[99_999].memory.name or ""
        assert last.split()[0] in drawn(table).splitlines()[-1]  # the last row is drawn, at the bottom
        await pilot.press("home")
        await pilot.pause()
        assert table.cursor_row == 0 and table.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        page = table.scrollable_content_region.height - 1  # the rows under the header
        assert table.cursor_row == page


async def test_a_kept_selection_is_kept_when_the_rows_are_rebuilt(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        for _ in range(4):
            await pilot.press("down")
        await pilot.pause()
        chosen = pane.selected_entry()
        assert chosen is not None and chosen is pane.shown[4]
        pane.refresh_table()  # a reload or a filter change rebuilds the rows
        await pilot.pause()
        assert pane.selected_entry() is not None and pane.selected_entry().relpath == chosen.relpath  # type: ignore[union-attr]


async def test_a_row_that_cannot_be_made_says_so_and_the_others_are_listed(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=(200, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        table = app.query_one(MemoryTable)
        real_row, third = memory_table.memory_row, pane.shown[2].relpath

        def row(entry: Any, width: int, *rest: Any) -> Any:
            if entry.relpath == third:
                raise ValueError("boom")
            return real_row(entry, width, *rest)

        monkeypatch.setattr(memory_table, "memory_row", row)
        table.show_memories(pane.shown)
        await settle(pilot)
        screen = drawn(table)
        assert f"cannot list {third} (ValueError)" in screen, screen
        for entry in pane.shown[:2] + pane.shown[3:]:
            assert (entry.memory.name or "").split()[0] in screen
        assert table.row_count == 5

        # a memory whose name and description cannot be drawn: the same, when its row is drawn
        monkeypatch.setattr(memory_table, "memory_row", real_row)
        real_text, fourth = memory_table.MemoryCell.text, pane.shown[3].relpath

        def text(cell: Any) -> Any:
            if cell.entry.relpath == fourth:
                raise UnicodeError("bad")
            return real_text(cell)

        monkeypatch.setattr(memory_table.MemoryCell, "text", text)
        table.show_memories(pane.shown)
        await settle(pilot)
        screen = drawn(table)
        assert f"cannot list {fourth} (UnicodeError)" in screen, screen
        assert (pane.shown[2].memory.name or "").split()[0] in screen


async def test_a_large_dir_shows_its_newest_memories_first_then_all(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.tui import memories

    monkeypatch.setattr(memories, "FIRST_BATCH", 2)
    app = make_app()
    seen: list[tuple[int, int]] = []
    ids: set[int] = set()

    def hook(message: object) -> None:  # called once per node the message bubbles through
        if isinstance(message, MemoriesPane.CatalogLoaded) and id(message) not in ids:
            ids.add(id(message))
            seen.append((len(message.catalog.entries), message.catalog.total))

    async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
        await settle(pilot)
        # the two newest first (of five), then the whole dir
        assert seen == [(2, 5), (5, 5)]
        assert [e.relpath for e in app.query_one(MemoriesPane).shown][:2] == ["user_role.md", "feedback_terse.md"]
        assert app.query_one(MemoryTable).border_title == "5 of 5 memories"


async def test_a_warm_first_batch_takes_the_index_summary(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch, isolated_env: Path) -> None:
    """Once a full scan has read ``MEMORY.md``, the next launch's first batch takes the index's
    truncation, dropped count and links from the catalog database (no entries parsed): the
    same gauge and index marks as the full catalog's."""
    from memtui.core.memory import catalogdb
    from memtui.tui import memories

    monkeypatch.setattr(memories, "FIRST_BATCH", 2)
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)  # the fixture's files were written just now
    index = isolated_env / "memory" / "MEMORY.md"
    # the fixture's 3 lines, then 202 links to files that do not exist: 205 lines, 5 past the cap
    index.write_text(index.read_text(encoding="utf-8").rstrip("\n") + "\n" + "".join(f"- [F{k}](f{k}.md) — x\n" for k in range(202)), encoding="utf-8")
    async with make_app().run_test(size=(120, 36)) as pilot:  # the full scan keeps the summary
        await settle(pilot)
        full_gauge = plain(pilot.app, "#memories-gauge")
    assert "205/200 lines" in full_gauge and "5 dropped" in full_gauge

    firsts: list[object] = []

    def hook(message: object) -> None:
        if isinstance(message, MemoriesPane.CatalogLoaded) and not message.catalog.complete and message not in firsts:
            firsts.append(message)

    async with make_app().run_test(size=(120, 36), message_hook=hook) as pilot:
        await settle(pilot)
        shown = {e.relpath: e.in_index for e in pilot.app.query_one(MemoriesPane).shown}
    assert len(firsts) == 1
    batch = firsts[0].catalog  # type: ignore[attr-defined]
    assert batch.index.is_summary and batch.index.entries == () and batch.index.dropped_count == 5
    assert {e.relpath: e.in_index for e in batch.entries} == {rel: shown[rel] for rel in (e.relpath for e in batch.entries)}


async def test_the_cells_are_drawn_exactly_as_datatable_draws_them(make_app: Callable[[], MemtuiApp], isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``MemoryTable`` draws its data cells itself (faster): every cell of every row, with and
    without the cursor, hovered or not, focused or not, must be the segments DataTable's own
    drawing gives — wide characters, a cut description and a declared type with a line end
    included."""
    from rich.style import Style
    from textual.widgets import DataTable

    memory_dir = isolated_env / "memory"
    (memory_dir / "project_wide.md").write_text(
        "---\nname: 数据库迁移的超时设置与回滚步骤说明\ndescription: " + "ロールバック手順 " * 20 + "\ntype: project\n---\n\nbody\n", encoding="utf-8"
    )
    (memory_dir / "odd_type.md").write_text('---\nname: odd\ndescription: d\ntype: "proj\\nect"\n---\n\nbody\n', encoding="utf-8")
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        table = app.query_one(MemoryTable)
        assert table.row_count == 7
        compared = 0
        datatable_drawn = DataTable._render_cell
        handed_over: list[int] = []

        def counted(*args: Any) -> Any:
            handed_over.append(1)
            return datatable_drawn(*args)

        monkeypatch.setattr(DataTable, "_render_cell", counted)
        for focused in (False, True):
            if focused:
                table.focus()
                await pilot.pause()
            table._pseudo_class_state = table.get_pseudo_class_state()
            for row in range(table.row_count):
                row_style = table._get_row_style(row, table.rich_style)
                for column, spec in enumerate(table.ordered_columns):
                    width = spec.get_render_width(table)
                    for cursor in (False, True):
                        for hover in (False, True):
                            table._cell_render_cache.clear()
                            handed_over.clear()  # what the app drew meanwhile (a header cell on a refresh) is not this cell
                            ours = table._render_cell(row, column, row_style, width, cursor, hover)
                            assert not handed_over  # drawn by MemoryTable itself
                            table._cell_render_cache.clear()
                            theirs = datatable_drawn(table, row, column, row_style, width, cursor, hover)
                            assert ours == theirs, (row, column, cursor, hover, focused)
                            assert isinstance(ours[0][0].style, Style)
                            compared += 1
        assert compared == 2 * 7 * 5 * 4


async def test_the_lines_are_drawn_exactly_as_datatable_draws_them(make_app: Callable[[], MemtuiApp]) -> None:
    """Every line of the table — header, rows, zebra stripes, the cursor's row, scrolled or
    not, focused or not — is the strip DataTable's own drawing gives (its ``render_line``,
    ``_get_row_style`` and ``_render_cell``, on the same rows)."""
    from functools import partial

    from textual.widgets import DataTable

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        table = app.query_one(MemoryTable)
        table.show_memories([pane.shown[i % 5] for i in range(200)])
        await pilot.pause()
        table.move_cursor(row=3)
        await pilot.pause()
        checked = 0
        for focused, scroll in ((False, 0), (True, 0), (True, 57)):
            if focused:
                table.focus()
            table.scroll_to(y=scroll, animate=False, immediate=True)
            await pilot.pause()
            table._pseudo_class_state = table.get_pseudo_class_state()
            for y in range(table.size.height):
                table._clear_caches()
                table._pass_styles = {}
                ours = table.render_line(y)
                table._pass_styles = None
                table._clear_caches()
                table._render_cell = partial(DataTable._render_cell, table)  # type: ignore[method-assign]
                table._get_row_style = partial(DataTable._get_row_style, table)  # type: ignore[method-assign]
                theirs = DataTable.render_line(table, y)
                del table._render_cell, table._get_row_style
                assert list(ours) == list(theirs), (focused, scroll, y)
                checked += 1
        assert checked == 3 * table.size.height

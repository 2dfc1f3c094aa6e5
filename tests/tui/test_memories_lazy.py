"""The Memories pane populates its table lazily: a first chunk of rows, more as the cursor nears
the end — so 20,000 memories do not cost 20,000 rows on every keystroke."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import DataTable

from memtui.tui import memories
from memtui.tui.app import MemtuiApp
from memtui.tui.memories import MemoriesPane


async def test_rows_follow_the_cursor_in_chunks(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memories, "ROW_CHUNK", 2)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        pane = app.query_one(MemoriesPane)
        table = app.query_one("#memories-table", DataTable)
        assert len(pane.shown) == 5
        assert table.row_count < 5  # not every row up front
        assert table.border_title == "5 of 5 memories"  # the count is of matches, not of rows
        for _ in range(6):
            await pilot.press("down")
        await pilot.pause()
        assert table.row_count == 5
        assert table.cursor_row == 4
        assert pane.selected_entry() is pane.shown[4]


async def test_a_kept_selection_past_the_first_chunk_is_rendered(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memories, "ROW_CHUNK", 2)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        pane = app.query_one(MemoriesPane)
        for _ in range(4):
            await pilot.press("down")
        await pilot.pause()
        chosen = pane.selected_entry()
        assert chosen is not None and chosen is pane.shown[4]
        pane.refresh_table()  # a reload or a filter change rebuilds the rows
        await pilot.pause()
        assert pane.selected_entry() is not None and pane.selected_entry().relpath == chosen.relpath  # type: ignore[union-attr]


async def test_a_large_dir_shows_its_newest_memories_first_then_all(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memories, "FIRST_BATCH", 2)
    app = make_app()
    seen: list[tuple[int, int]] = []
    ids: set[int] = set()

    def hook(message: object) -> None:  # called once per node the message bubbles through
        if isinstance(message, MemoriesPane.CatalogLoaded) and id(message) not in ids:
            ids.add(id(message))
            seen.append((len(message.catalog.entries), message.catalog.total))

    async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        # the two newest first (of five), then the whole dir
        assert seen == [(2, 5), (5, 5)]
        assert [e.relpath for e in app.query_one(MemoriesPane).shown][:2] == ["user_role.md", "feedback_terse.md"]
        assert app.query_one("#memories-table", DataTable).border_title == "5 of 5 memories"

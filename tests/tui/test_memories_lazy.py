"""The Memories pane lists a large dir without waiting for it: the first rows at once, the rest
in chunks after them — and home / end still reach the first / last memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.containers import VerticalScroll

from support.pilot import plain, settle

from memtui.tui.app import MemtuiApp
from memtui.tui.memories import MemoriesPane
from memtui.tui.widgets import memory_table
from memtui.tui.widgets.memory_table import MemoryTable


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_table, "ROW_CHUNK", 2)
    monkeypatch.setattr(memory_table, "FILL_IDLE", 0.01)


@pytest.mark.usefixtures("small_chunks")
async def test_the_first_rows_at_once_the_rest_after(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        table = app.query_one(MemoryTable)
        assert len(pane.shown) == 5
        table.show_memories(pane.shown)
        assert table.row_count == 2  # not every row up front
        await settle(pilot)
        assert table.row_count == 5
        assert table.border_title == "5 of 5 memories"


@pytest.mark.usefixtures("small_chunks")
async def test_end_and_home_reach_the_last_and_first_memory(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        table = app.query_one(MemoryTable)
        table.show_memories(pane.shown)  # as after a search: two rows so far
        await pilot.press("end")  # before the last row is listed: it lands there once it is
        await settle(pilot)
        assert table.row_count == 5
        assert pane.selected_entry() is pane.shown[4]
        assert app.query_one("#memories-preview", VerticalScroll).border_title == pane.shown[4].relpath
        await pilot.press("home")
        await pilot.pause()
        assert pane.selected_entry() is pane.shown[0]
        assert app.query_one("#memories-preview", VerticalScroll).border_title == pane.shown[0].relpath


@pytest.mark.usefixtures("small_chunks")
async def test_a_kept_selection_past_the_first_chunk_is_listed(make_app: Callable[[], MemtuiApp]) -> None:
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

"""Snapshots of the Memories pane and of the doctor and the inbox it opens, at the size the
README's screenshots use and at 80×24 (frozen clock, paths under the fake HOME)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.memories import NOW, write_transcript
from support.pilot import settle, wait_until

from memtui.core.extract import extract
from memtui.tui.app import MemtuiApp
from memtui.tui.widgets.memory_table import MemoryTable
from memtui.tui.doctor import DoctorScreen
from memtui.tui.inbox import InboxScreen

SIZES = pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["wide", "narrow"])


def keys_then_settle(*keys: str) -> Callable[[Any], Any]:
    """A ``run_before`` that waits for the scan, presses ``keys`` and lets the table, its row
    chunks and the preview (which follows the table's repaint) settle — under load one pause
    after the last key is not enough, and the snapshot caught a half-drawn preview."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
        for _ in range(3):
            await settle(pilot)
        # the rows are built for the memory column's width at the table's final size (a layout
        # that settles late — a scrollbar shown, then not — refits them once more)
        await wait_until(pilot, lambda: all(t.row_width == t.memory_width() for t in pilot.app.query(MemoryTable)), what="the rows refitted")
        await settle(pilot)

    return run_before


@SIZES
def test_memories_pane_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp], size: tuple[int, int]) -> None:
    # the fourth row: a 45-day-old reference memory, with its stale caveat in the preview
    assert snap_compare(make_app(), terminal_size=size, run_before=keys_then_settle("down", "down", "down"))


def test_memories_pane_filtered_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp]) -> None:
    # the untyped filter: only the memory whose type is nested under metadata
    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=keys_then_settle("t", "t", "t", "t", "t"))


@SIZES
def test_doctor_screen_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp], size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DoctorScreen) and pilot.app.screen.report is not None, what="the doctor's report")
        await settle(pilot)
        await pilot.press("down")  # the dangling index link: its finding in the detail
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)


@SIZES
def test_inbox_screen_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp], tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app()
    loc = app.locations
    session = write_transcript(tmp_path / "s1.jsonl", loc.project_root, "Remember that we never deploy on Fridays.", "From now on, write commit messages in the imperative mood.")
    extract(session, loc.memory_dir, loc.state_dir, NOW, extractor="offline")

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("I")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, InboxScreen) and bool(pilot.app.screen.proposals), what="the inbox's proposals")
        await settle(pilot)  # the first proposal's source conversation is read in a worker

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_key_panel_snapshot_at_80x24(snap_compare: Any, make_app: Callable[[], MemtuiApp]) -> None:
    # ? in the Memories pane: the pane's own keys at the top, the movement keys summed up
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=keys_then_settle("question_mark"))


async def test_every_footer_key_is_on_screen_at_80x24(make_app: Callable[[], MemtuiApp]) -> None:
    """No key of any pane's footer is cut off or hidden at 80×24 (the Memories pane shows a
    dozen): each lies inside the screen, none over another."""
    from textual.widgets._footer import FooterKey

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for pane in ("1", "2", "3", "4"):
            await pilot.press("escape", pane)
            await settle(pilot)
            keys = [k for k in app.screen.query(FooterKey) if not k.has_class("-command-palette")]
            palette = app.screen.query(FooterKey).filter(".-command-palette").first().region
            regions = [k.region for k in keys]
            assert keys, pane
            for key, region in zip(keys, regions, strict=True):
                assert region.width > 0 and region.right <= palette.x and region.bottom <= 24, (pane, key.description, region)
            assert all(not a.overlaps(b) for i, a in enumerate(regions) for b in regions[i + 1:]), pane

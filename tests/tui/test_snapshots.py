"""Snapshot of the Memories pane (frozen clock, fixed size, paths under the fake HOME)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memtui.tui.app import MemtuiApp


def keys_then_settle(*keys: str) -> Callable[[Any], Any]:
    """A ``run_before`` that waits for the scan, presses ``keys`` and lets the table, its row
    chunks and the preview (which follows the table's repaint) settle — under load one pause
    after the last key is not enough, and the snapshot caught a half-drawn preview."""

    async def run_before(pilot: Any) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        for _ in range(3):
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()

    return run_before


def test_memories_pane_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp]) -> None:
    # the fourth row: a 45-day-old reference memory, with its stale caveat in the preview
    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=keys_then_settle("down", "down", "down"))


def test_memories_pane_filtered_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp]) -> None:
    # the untyped filter: only the memory whose type is nested under metadata
    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=keys_then_settle("t", "t", "t", "t", "t"))

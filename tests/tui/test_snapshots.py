"""Snapshot of the Memories pane (frozen clock, fixed size, paths under the fake HOME)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memtui.tui.app import MemtuiApp


def test_memories_pane_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp]) -> None:
    async def run_before(pilot: Any) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    # the fourth row: a 45-day-old reference memory, with its stale caveat in the preview
    assert snap_compare(make_app(), press=["down", "down", "down"], terminal_size=(120, 36), run_before=run_before)


def test_memories_pane_filtered_snapshot(snap_compare: Any, make_app: Callable[[], MemtuiApp]) -> None:
    async def run_before(pilot: Any) -> None:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    # the untyped filter: only the memory whose type is nested under metadata
    assert snap_compare(make_app(), press=["t", "t", "t", "t", "t"], terminal_size=(120, 36), run_before=run_before)

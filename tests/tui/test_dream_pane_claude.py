"""The Dream pane on the claude flavor at its 2.1.328 profile, over the states Claude Code
2.1.328's captured runs left (its flag cache, settings, lock and transcripts, rebuilt with their
mtimes; the clock frozen an hour after the run): its gates in its order with the verdict (no
organization gate: 2.1.332 added it, see ``test_dream_pane_org``), the failed-dream trap on the
lock the failing run left, reset and undo from the pane, the dream request, and the history of
the agent's own dream and extractions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli_captures import Scene, build
from support.pilot import fixed_snapshot_dir, open_claude_dream, plain, settle, wait_until
from textual.pilot import Pilot
from textual.widgets import OptionList

from memtui.core.places.flavor import CLAUDE_2_1_328
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import PlanPreview

HOUR = 3600.0


def claude_app(root: Path, monkeypatch: pytest.MonkeyPatch, run: str, state: str = "after", **kw: Any) -> tuple[Scene, MemtuiApp]:
    scene = build(root, run, state, **kw)
    monkeypatch.setenv("HOME", str(scene.home))
    monkeypatch.setenv("MEMTUI_NOW", scene.now(HOUR).isoformat())
    return scene, MemtuiApp.for_project(CLAUDE_2_1_328, scene.project, watch=False)


async def test_the_failed_dream_trap_on_the_lock_the_failing_run_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene, app = claude_app(tmp_path, monkeypatch, "gate_fail")
    lock = scene.memory_dir / ".consolidate-lock"
    before = (lock.read_bytes(), lock.stat().st_mtime)
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await open_claude_dream(app, pilot)
        gates = plain(app, "#dream-gates", width=220)
        assert "✘ time     1.0 h since the last  (min 24 h)" in gates
        assert "✘ sessions 1 of 5 newer than the lock" in gates
        assert "■ no dream before" in gates
        assert "⚠ the last dream left no record — L resets the lock" in gates
        await pilot.press("g")
        await pilot.pause()
        details = plain(app, "#dream-diff-text", width=220)
        assert " 5. ✔ flag + setting" in details and "from ~/.claude.json cachedGrowthBookFeatures.tengu_onyx_plover" in details
        assert "no dream record (memory_saved / memory_update) followed" in details
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanPreview))
        await pilot.press("enter")
        await wait_until(pilot, lambda: pane.running is None and lock.read_bytes() == b"")
        await wait_until(pilot, lambda: pane.auto is not None and pane.auto.would_fire)
        assert lock.stat().st_mtime == 0.0
        assert "▶ dreams at the end of the next interactive turn" in plain(app, "#dream-gates", width=220)
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanPreview))
        await pilot.press("enter")
        await wait_until(pilot, lambda: pane.running is None and lock.read_bytes() == before[0])
    assert (lock.read_bytes(), lock.stat().st_mtime) == before


async def test_history_lists_the_agents_dream_and_extractions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene, app = claude_app(tmp_path, monkeypatch, "both")
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await open_claude_dream(app, pilot)
        await pilot.press("h")
        await pilot.pause()
        options = app.query_one("#dream-changes", OptionList)
        assert options.option_count == 3
        assert "consolidated 4 memory files" in str(options.get_option_at_index(1).prompt)
        options.highlighted = 1
        await pilot.pause()
        detail = plain(app, "#dream-diff-text", width=220)
        assert "Background memory consolidation updated your memory directory: consolidated 4 memory files" in detail
        assert "project_release_schedule.md" in detail
        assert pane.showing_history


async def test_the_request_as_claude_code_would_send_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene, app = claude_app(tmp_path, monkeypatch, "dream1", "before")
    async with app.run_test(size=(140, 40)) as pilot:
        await open_claude_dream(app, pilot)
        await pilot.press("v")
        await wait_until(pilot, lambda: "# Dream: Memory Consolidation" in plain(app, "#dream-diff-text", width=220))
        text = plain(app, "#dream-diff-text", width=220)
        assert "model: claude-opus-5-5 (Claude Code 2.1.328 default)" in text
        assert f"Memory directory: `{scene.memory_dir}/`" in text
        assert "Sessions since last consolidation (6):" in text


def test_dream_pane_claude_snapshot(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gates of the failing run's state (its lock's PID replaced by one above Linux's
    pid_max, so that no process on the test machine holds it)."""
    with fixed_snapshot_dir("dream-claude") as root:  # the header and the gates name the project's realpath
        _scene, app = claude_app(root, monkeypatch, "gate_fail", lock_content="4194305")

        async def run_before(pilot: Any) -> None:
            await settle(pilot)
            await open_claude_dream(pilot.app, pilot)
            await settle(pilot)

        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

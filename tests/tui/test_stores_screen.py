"""The memory stores view (W in the Memories pane) on Claude Code 2.1.332 transcripts: the finding
and its fixes, the stores, the index cost per session; a merge previewed, applied and counted."""

from __future__ import annotations

import shutil
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.pilot import settle, wait_until
from support.stores import materialize
from textual.widgets import Static, Tree

from memtui.core.places.flavor import get_flavor
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import PlanPreview
from memtui.tui.stores import StoresScreen

SIZES = pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["wide", "narrow"])


@pytest.fixture()
def scenario(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A captured scenario laid out at a fixed path (the view shows paths: a snapshot must not
    depend on tmp_path), with HOME pointing at its home."""
    name = getattr(request, "param", "worktree")
    root = Path(tempfile.gettempdir()) / f"mst-{zlib.crc32(request.node.name.encode()):08x}"
    shutil.rmtree(root, ignore_errors=True)
    layout = materialize(name, root)
    monkeypatch.setenv("HOME", layout["home"])
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-07T12:00:00Z")
    yield layout
    shutil.rmtree(root, ignore_errors=True)


def _app(layout: dict) -> MemtuiApp:
    return MemtuiApp.for_project(get_flavor("claude"), Path(layout["project"]), watch=False)


async def _open(pilot: Any) -> StoresScreen:
    await settle(pilot)
    await pilot.press("2")
    await settle(pilot)
    await pilot.press("W")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, StoresScreen) and pilot.app.screen.report is not None, what="the stores")
    await settle(pilot)
    return pilot.app.screen  # type: ignore[return-value]


async def test_the_view_shows_the_split_and_its_fixes(scenario: dict) -> None:
    app = _app(scenario)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(pilot)
        detail = str(screen.query_one("#stores-item", Static).render())
        assert "store-split" in detail
        assert f"git -C {scenario['project']} worktree repair {scenario['worktree']}" in detail
        tree = screen.query_one("#stores-tree", Tree)
        labels = [str(leaf.label) for node in tree.root.children for leaf in node.children]
        assert any("wt-moved" in label for label in labels)


@pytest.mark.parametrize("scenario", ["subdir"], indirect=True)
async def test_m_previews_and_applies_the_merge(scenario: dict) -> None:
    app = _app(scenario)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(pilot)
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PlanPreview), what="the preview")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.changed and screen.report is not None and not screen.report.findings, what="the merge and the re-read")
    assert Path(scenario["stray"], "svc_notes.md").exists() is False
    assert (Path(app.locations.memory_dir) / "svc_notes.md").is_file()


@pytest.mark.parametrize("scenario", ["healthy"], indirect=True)
async def test_a_healthy_project_says_no_finding_and_m_refuses(scenario: dict) -> None:
    app = _app(scenario)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(pilot)
        assert screen.report is not None and screen.report.findings == ()
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(pilot.app.screen, StoresScreen)  # nothing to merge: no preview


@SIZES
def test_stores_screen_snapshot(snap_compare: Any, scenario: dict, size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await _open(pilot)

    assert snap_compare(_app(scenario), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("scenario", ["automem_off"], indirect=True)
async def test_f_previews_and_applies_the_setting_fix(scenario: dict) -> None:
    app = _app(scenario)
    settings = Path(scenario["home"]) / ".claude" / "settings.json"
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(pilot)
        assert screen.report is not None and [f.code for f in screen.report.findings] == ["auto-memory-off"]
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PlanPreview), what="the preview")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.changed and screen.report is not None and not screen.report.findings, what="the setting and the re-read")
    assert "CLAUDE_CODE_DISABLE_AUTO_MEMORY" not in settings.read_text()


@pytest.mark.parametrize("scenario", ["subdir"], indirect=True)
async def test_u_undoes_the_merge_made_here(scenario: dict) -> None:
    from support.trees import file_bytes

    app = _app(scenario)
    before = file_bytes(Path(scenario["home"]))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(pilot)
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PlanPreview), what="the preview")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.changed and screen.report is not None and not screen.report.findings, what="the merge")
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PlanPreview), what="the undo's preview")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.report is not None and len(screen.report.findings) == 1, what="the undo and the re-read")
    assert file_bytes(Path(scenario["home"])) == before


async def test_from_inside_a_moved_worktree_m_merges_toward_the_main_store(scenario: dict) -> None:
    # The finding's merge runs from this worktree's store into the main checkout's store, as
    # its command says — never the main store into the worktree's.
    app = MemtuiApp.for_project(get_flavor("claude"), Path(scenario["worktree"]), watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _open(pilot)
        assert screen._merge_args() == (Path(scenario["worktree_store"]), Path(screen.report.findings[0].store), False)  # type: ignore[union-attr]

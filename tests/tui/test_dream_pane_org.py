"""The Dream pane on the claude flavor at 2.1.332 over the organization gate's captured
variants (``tests/captures/claude-2.1.332/org_gate``, rebuilt; the clock frozen when the CLI
started): the gate's line after the lock, the verdict, and in the details view the marking
file and line, the organization and the lock given back. The 2.1.328 profile shows no such
line (its snapshot is ``test_dream_pane_claude``'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.org_gate import NOW, OrgScene, build_org
from support.pilot import fixed_snapshot_dir, open_claude_dream, plain, settle
from textual.pilot import Pilot

from memtui.core.places.flavor import CLAUDE, CLAUDE_2_1_328, Flavor
from memtui.tui.app import MemtuiApp

A = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def org_app(root: Path, monkeypatch: pytest.MonkeyPatch, name: str, flavor: Flavor = CLAUDE) -> tuple[OrgScene, MemtuiApp]:
    scene = build_org(root, name)
    monkeypatch.setenv("HOME", str(scene.home))
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    return scene, MemtuiApp.for_project(flavor, scene.project, watch=False)


async def test_the_pane_lists_the_organization_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene, app = org_app(tmp_path, monkeypatch, "org_main")
    (path, line, _text), = scene.marked
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await open_claude_dream(app, pilot)
        assert pane.auto is not None and pane.auto.reason == "other_hybrid_organization"
        gates = plain(app, "#dream-gates", width=220)
        assert "✘ org      a past session signed in to 6f1b2c3d… (g)" in gates
        assert f"■ skipped unless signed in to organization {A}" in gates
        assert gates.index("lock     ") < gates.index("org      ")
        await pilot.press("g")
        await pilot.pause()
        details = plain(app, "#dream-diff-text", width=400)
        assert f"11. ✘ organization  a past session here was signed in to organization {A}" in details
        assert f"marked: {path} line {line}: organization {A}" in details
        assert "then: Claude Code takes the lock before this search and gives it back without dreaming: the lock is emptied and its date put back to" in details
        assert "details: reason other_hybrid_organization; event tengu_auto_dream_skipped" in details


async def test_an_open_organization_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scene, app = org_app(tmp_path, monkeypatch, "org_bad")
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await open_claude_dream(app, pilot)
        assert pane.auto is not None and pane.auto.would_fire
        gates = plain(app, "#dream-gates", width=220)
        assert "✔ org      no transcript marks an organization sign-in" in gates
        assert "▶ dreams at the end of the next interactive turn" in gates


async def test_the_2_1_328_profile_has_no_organization_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scene, app = org_app(tmp_path, monkeypatch, "org_main", CLAUDE_2_1_328)
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await open_claude_dream(app, pilot)
        assert pane.auto is not None and pane.auto.would_fire
        assert "org " not in plain(app, "#dream-gates", width=220)
        await pilot.press("g")
        await pilot.pause()
        assert "organization" not in plain(app, "#dream-diff-text", width=400)


def test_dream_pane_org_snapshot(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two organizations marked (the CLI's ``mixed``): the gate closes for every session."""
    with fixed_snapshot_dir("dream-org") as root:  # the gates name the project's realpath
        _scene, app = org_app(root, monkeypatch, "org_two")

        async def run_before(pilot: Any) -> None:
            await settle(pilot)
            await open_claude_dream(pilot.app, pilot)
            await settle(pilot)

        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

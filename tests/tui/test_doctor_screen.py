"""The doctor's findings view: grouped by file, a safe fix previewed then applied, undoable."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Tree

from support.pilot import settle

from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import PlanPreview
from memtui.tui.doctor import DoctorScreen


async def test_doctor_groups_findings_by_file_and_applies_a_safe_fix(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await settle(pilot)
        memory_dir = app.locations.memory_dir
        await pilot.press("D")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        await settle(pilot)
        tree = screen.query_one("#doctor-tree", Tree)
        files = [str(node.label).split("  ")[0][2:] for node in tree.root.children]
        # warnings and errors by file (the nested type, the index's dangling link), then the
        # notes (advice) counted by kind
        assert files == ["MEMORY.md", "feedback_nested.md", "notes: advice, not defects"]
        nested = tree.root.children[1]
        codes = [leaf.data.code for leaf in nested.children]  # type: ignore[union-attr]
        assert "type-nested" in codes
        tree.move_cursor(nested.children[codes.index("type-nested")])
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        assert "+type: feedback" in app.screen.plan.diff()
        await pilot.press("y")
        await pilot.pause()
        await settle(pilot)
        assert "\ntype: feedback\n" in (memory_dir / "feedback_nested.md").read_text()
        assert "metadata:" not in (memory_dir / "feedback_nested.md").read_text()
        await pilot.press("escape")
        await pilot.pause()
        await settle(pilot)
        assert not isinstance(app.screen, DoctorScreen)

"""The inbox: proposals from the offline extractor, accepted, edited then accepted, rejected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import TextArea

from support.memories import NOW, write_transcript
from support.pilot import settle

from memtui.core.extract import extract
from memtui.core.extract.inbox import Inbox
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import EditorScreen, PlanPreview
from memtui.tui.inbox import InboxScreen



async def test_accept_edit_and_reject_proposals(make_app: Callable[..., MemtuiApp], tmp_path: Path) -> None:
    app = make_app()
    loc = app.locations
    session = write_transcript(
        tmp_path / "s1.jsonl",
        loc.project_root,
        "Remember that we never deploy on Fridays.",
        "From now on, write commit messages in the imperative mood.",
        "Remember that the staging database is read-only.",
    )
    result = extract(session, loc.memory_dir, loc.state_dir, NOW, extractor="offline")
    assert len(result.proposals) == 3
    inbox = Inbox(loc.state_dir, loc.memory_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await settle(pilot)
        assert "3 in the inbox" in str(app.query_one("#memories-location").content)
        await pilot.press("I")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        names = [p.name for p in screen.proposals]
        assert len(names) == 3
        # accept the first
        first = screen.proposals[0]
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        await pilot.press("y")
        await settle(pilot)
        assert (loc.memory_dir / first.path).is_file()
        assert f"]({first.path})" in (loc.memory_dir / "MEMORY.md").read_text()
        assert "originSessionId: s1" in (loc.memory_dir / first.path).read_text()
        # reject the next
        rejected = screen.proposals[0]
        await pilot.press("x")
        await settle(pilot)
        assert inbox.get(rejected.id).status == "rejected"
        # edit then accept the last
        last = screen.proposals[0]
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        area = app.screen.query_one(TextArea)
        area.text = area.text.replace(last.description, "Staging DB is read-only (edited)")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PlanPreview)
        await pilot.press("y")
        await settle(pilot)
        written = (loc.memory_dir / last.path).read_text()
        assert "description: Staging DB is read-only (edited)" in written
        assert inbox.pending() == []
        await pilot.press("escape")
        await pilot.pause()
        await settle(pilot)
        from memtui.tui.memories import MemoriesPane

        listed = [e.relpath for e in app.query_one(MemoriesPane).shown]
        assert first.path in listed and last.path in listed

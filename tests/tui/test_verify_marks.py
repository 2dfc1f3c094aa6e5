"""The demo in the app: the doctor screen and the Recall pane show the Kafka conflict (the two
cutover memories, 65 and 4 days old), and the Memories preview shows a memory's claims once the
verify worker is done (the list never waits for it)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static, Tree

from memtui.core.places.flavor import AGENT
from memtui.demo import materialize
from memtui.tui.app import MemtuiApp
from memtui.tui.doctor import DoctorScreen
from memtui.tui.memories import MemoriesPane
from support.pilot import panes_mounted, plain, rendered, settle, type_text, wait_until
from tests.tui.test_recall_pane import open_recall, result_for

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.fixture
def demo_app(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> MemtuiApp:
    ws = materialize(isolated_env / "demo", NOW)
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    monkeypatch.setenv("HOME", str(ws.home))
    return MemtuiApp.for_project(AGENT, ws.project, watch=False)


async def test_recall_marks_the_older_kafka_memory(demo_app: MemtuiApp) -> None:
    app = demo_app
    async with app.run_test(size=(160, 50)) as pilot:
        p = await open_recall(app, pilot)
        await type_text(pilot, "when is the kafka cutover")
        result = await result_for(app, pilot, "when is the kafka cutover")
        picks = [x.relpath for x in result.picks]
        assert "project_sqs_to_kafka.md" in picks and "project_kafka_migration.md" in picks
        await wait_until(pilot, lambda: "project_sqs_to_kafka.md" in p.newer)
        await pilot.pause()
        text = plain(app, "#recall-picks")
        marked = [line for line in text.splitlines() if "a newer memory disagrees" in line]
        # only the older memory carries the mark, naming the newer one and both dates
        assert len(marked) == 1
        assert "project_kafka_migration.md" in marked[0] and "2026-11-02 here, 2026-12-14" in marked[0]



async def test_a_skipped_prompt_marks_what_recall_would_pick(demo_app: MemtuiApp) -> None:
    app = demo_app
    async with app.run_test(size=(160, 50)) as pilot:
        p = await open_recall(app, pilot)
        await type_text(pilot, "kafka")
        result = await result_for(app, pilot, "kafka")
        assert result.skipped and "project_sqs_to_kafka.md" in [x.relpath for x in result.would_pick]
        await wait_until(pilot, lambda: "project_sqs_to_kafka.md" in p.newer)
        await pilot.pause()
        text = plain(app, "#recall-picks")
        assert "Would pick" in text
        marked = [line for line in text.splitlines() if "a newer memory disagrees" in line]
        # the single-word prompt is not sent, but the older cutover memory it would pick is still marked
        assert len(marked) == 1 and "project_kafka_migration.md" in marked[0]

async def test_memories_preview_shows_the_claims(demo_app: MemtuiApp) -> None:
    app = demo_app
    async with app.run_test(size=(160, 50)) as pilot:
        memories = app.query_one(MemoriesPane)
        await wait_until(pilot, lambda: memories.catalog is not None and memories.catalog.complete)
        await wait_until(pilot, lambda: memories.verification is not None)
        table = app.query_one("#memories-table", DataTable)
        for relpath, expected in (
            ("feedback_vendored_code.md", "verified 3/3"),
            ("project_vendor_api_cutover.md", "0/1 verified · 1 stale"),
        ):
            row = [e.relpath for e in memories.shown].index(relpath)
            table.move_cursor(row=row)
            await wait_until(pilot, lambda: expected in plain(app, "#preview-fields"))
            fields = plain(app, "#preview-fields")
        assert "`parcelly_v2` occurs nowhere in the project; closest: `parcelly_v2_enabled`" in fields


async def test_a_second_launch_takes_the_claims_of_unchanged_memories_from_the_database(demo_app: MemtuiApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """The claims each memory states are kept in the catalog database by the first check; the
    next launch checks them again without reading the memories' text for them."""
    from memtui.core.memory import catalogdb
    from memtui.core.verify import claims as claims_module

    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)  # the demo's files were written just now

    async with demo_app.run_test(size=(160, 50)) as pilot:
        memories = demo_app.query_one(MemoriesPane)
        await wait_until(pilot, lambda: memories.verification is not None)
        first = {rel: [r.status for r in mv.results] for rel, mv in memories.verification.memories.items()}  # type: ignore[union-attr]
        # the check can finish before the other panes are mounted: leaving now would close the
        # app in the middle of their mount
        await panes_mounted(pilot)
    read: list[str] = []
    real = claims_module.memory_claims

    def counted(mem: object) -> object:
        read.append(mem.relpath)  # type: ignore[attr-defined]
        return real(mem)  # type: ignore[arg-type]

    monkeypatch.setattr(claims_module, "memory_claims", counted)
    again = MemtuiApp(demo_app.locations, watch=False)
    async with again.run_test(size=(160, 50)) as pilot:
        memories = again.query_one(MemoriesPane)
        await wait_until(pilot, lambda: memories.verification is not None)
        assert {rel: [r.status for r in mv.results] for rel, mv in memories.verification.memories.items()} == first  # type: ignore[union-attr]
        await panes_mounted(pilot)
    assert read == []
    assert first["project_vendor_api_cutover.md"].count("stale") == 1


async def test_doctor_screen_shows_the_kafka_conflict(demo_app: MemtuiApp) -> None:
    app = demo_app
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and app.screen.report is not None, what="the doctor's report")
        await settle(pilot)
        screen = app.screen
        tree = screen.query_one("#doctor-tree", Tree)
        # a possible conflict is advice: counted under the notes until `i` lists them by file
        [notes] = [n for n in tree.root.children if "notes: advice" in str(n.label)]
        assert any(c.data is not None and c.data.code == "possible-conflict" for c in notes.children)  # type: ignore[union-attr]
        await pilot.press("i")
        await settle(pilot)
        [node] = [n for n in tree.root.children if str(n.label).split("  ")[0][2:] == "project_sqs_to_kafka.md"]
        [leaf] = [c for c in node.children if c.data is not None and c.data.code == "possible-conflict"]  # type: ignore[union-attr]
        assert not str(leaf.label).endswith("⚒")  # which memory is right is the user's call: no fix
        tree.move_cursor(leaf)
        await pilot.pause()
        detail = rendered(screen.query_one("#doctor-finding", Static).content)
        # the cutover: now - 28 days (2026-11-02) in the older memory, now + 14 days (2026-12-14)
        # in the newer project_kafka_migration.md
        assert "project_kafka_migration.md" in detail and "2026-11-02 here, 2026-12-14" in detail


async def test_the_demo_doctor_at_80x24_opens_at_its_first_group_with_room_for_findings(demo_app: MemtuiApp) -> None:
    """A short terminal: the tree starts at its top (the first file's row above its first
    finding in sight), and the detail box gives the tree the rows it does not fill."""
    app = demo_app
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and app.screen.report is not None, what="the doctor's report")
        await settle(pilot)
        await pilot.pause()
        tree = app.screen.query_one("#doctor-tree", Tree)
        assert tree.cursor_node is tree.root.children[0].children[0]  # the first finding
        assert tree.scroll_y == 0  # its file's row above it is shown
        assert tree.content_region.height >= 8  # 24 rows: summary, footer and the detail's text around it

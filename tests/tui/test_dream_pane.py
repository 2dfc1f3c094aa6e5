"""The Dream pane, driven with Pilot over a memory dir written for it (frozen clock, isolated
HOME and state dir): a duplicate pair, a relative date in a project memory, a dangling index
link, and five transcripts so that every gate is open.

The plan the pane shows is checked against the core's own dry run (``plan_dream``) and against
what the offline consolidator must do with these files; the cancel test wraps the real offline
consolidator (the ``Consolidator`` interface) so that it pauses in the gather phase until the
test has pressed escape — no sleeps, no patching of the code under test.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from support.memories import NOW
from support.pilot import plain, settle, wait_until

from memtui.core.dream import (
    DreamContext,
    DreamEvent,
    DreamPlan,
    PhaseStarted,
    plan_dream,
    read_lock,
)
from memtui.core.dream.offline import consolidate_offline
from memtui.core.places.flavor import AGENT
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import PlanPreview
from memtui.tui.dream import DreamPane
from memtui.tui.memories import MemoriesPane

T = NOW.timestamp()
DAY = 86_400
SESSIONS = ["0a1b2c3d-0000-4000-8000-000000000001", "0a1b2c3d-0000-4000-8000-000000000002", "0a1b2c3d-0000-4000-8000-000000000003", "0a1b2c3d-0000-4000-8000-000000000004", "0a1b2c3d-0000-4000-8000-000000000005"]
REVIEW = "The user reviews pull requests in the morning before the daily standup meeting.\n"


def memory(name: str, description: str, mem_type: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {mem_type}\n---\n\n{body}"


FILES: dict[str, tuple[str, float]] = {
    "user_reviews.md": (memory("Reviews", "Reviews PRs in the morning", "user", REVIEW), 9),
    "user_reviews_again.md": (memory("Reviews again", "Reviews before standup", "user", REVIEW), 3),
    "project_vendor.md": (
        memory("Vendor cutover", "Parcelly v1 shutdown", "project", "We agreed yesterday with their team that the v2 client ships first.\n"),
        10,
    ),
    "MEMORY.md": (
        (
            "- [Reviews](user_reviews.md) — reviews in the morning\n"
            "- [Vendor cutover](project_vendor.md) — v1 shutdown\n"
            "- [Load test](project_gone.md) — deleted long ago\n"
        ),
        9,
    ),
}


def write(path: Path, data: str | bytes, age_days: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    stamp = T - age_days * DAY
    os.utime(path, (stamp, stamp))


def tree(root: Path) -> dict[str, tuple[bytes, float]]:
    """Every file below ``root`` (the lock included): relpath → (bytes, mtime)."""
    out: dict[str, tuple[bytes, float]] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), p.stat().st_mtime)
    return out


@pytest.fixture
def dream_app(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., MemtuiApp]:
    """A factory for the app on the dream memory dir, built the way the CLI builds it.
    ``sessions``: how many transcripts (touched in the last days); ``lock_age_h``: a lock file
    left by a finished consolidation that long ago (``None``: never consolidated)."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    project = isolated_env / "project"
    project.mkdir()
    memory_dir = isolated_env / "memory"
    for rel, (text, age) in FILES.items():
        write(memory_dir / rel, text, age)

    def factory(*, sessions: int = 5, lock_age_h: float | None = None) -> MemtuiApp:
        app = MemtuiApp.for_project(AGENT, project, memory_dir=memory_dir, watch=False)
        for i, sid in enumerate(SESSIONS[:sessions]):
            line = {"type": "user", "sessionId": sid, "cwd": str(project), "message": {"role": "user", "content": "hello"}}
            write(app.locations.sessions_dir / f"{sid}.jsonl", json.dumps(line) + "\n", 2 - i * 0.1)
        if lock_age_h is not None:
            write(memory_dir / ".consolidate-lock", b"", lock_age_h / 24)
        return app

    return factory


def pane(app: MemtuiApp) -> DreamPane:
    return app.query_one(DreamPane)


async def open_dream(app: MemtuiApp, pilot: Pilot[None]) -> DreamPane:
    await pilot.press("4")
    await wait_until(pilot, lambda: pane(app).status is not None)
    await pilot.pause()
    return pane(app)


def expected_plan(app: MemtuiApp) -> DreamPlan:
    """The core's own dry run over the same files (the pane must show exactly this)."""
    return plan_dream(DreamContext.from_locations(app.locations), NOW, "offline")


async def test_gate_status_renders(dream_app: Callable[..., MemtuiApp]) -> None:
    app = dream_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_dream(app, pilot)
        text = plain(app, "#dream-gates")
        assert "✔ time     never consolidated  (min 24 h)" in text
        assert "✔ sessions 5 since the last dream  (min 5)" in text
        assert "✔ lock     free" in text
        assert "last consolidated never" in text
        assert "▶ a dream would run now" in text
        assert "offline" in plain(app, "#dream-status")


async def test_gate_status_says_what_blocks_and_when_it_opens(dream_app: Callable[..., MemtuiApp]) -> None:
    app = dream_app(sessions=2, lock_age_h=3)
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await open_dream(app, pilot)
        text = plain(app, "#dream-gates")
        assert "✘ time     3.0 h since the last dream  (min 24 h)" in text
        assert "last consolidated 2026-11-30 09:00 UTC (3.0 h ago)" in text
        # the first closed gate, cheapest first, when it opens, and the later gate still shut
        # then (0 sessions since the last dream, 5 needed)
        assert "■ blocked by time — opens 2026-12-01 09:00 UTC (in 21.0 h); 5 more sessions needed too" in text
        assert "✘ sessions 0 since the last dream" in text  # both transcripts predate the last dream
        before = tree(app.locations.memory_dir)
        await pilot.press("R")
        await wait_until(pilot, lambda: pane(app).running is None and "blocked" in plain(app, "#dream-gates"))
        await pilot.pause()
        assert pane(app).plan is None and pane(app).session is None
        assert tree(app.locations.memory_dir) == before
        # the way round the gates is the pane's key, not the command line's flag
        gate = [m.notification.message for m in seen if isinstance(m, Notify) and m.notification.title == "Gate closed"]
        assert gate and gate[-1].endswith("(F skips the gates)") and "--force" not in gate[-1]


async def test_dry_run_streams_phases_and_writes_nothing(dream_app: Callable[..., MemtuiApp]) -> None:
    app = dream_app()
    seen: list[Message] = []
    before = tree(app.locations.memory_dir)
    state_dir = app.locations.state_dir
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        p = await open_dream(app, pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: p.plan is not None)
        await pilot.pause()

        events: list[DreamEvent] = [m.event for m in seen if isinstance(m, DreamPane.Streamed)]
        started = [e.phase for e in events if isinstance(e, PhaseStarted)]
        assert started == ["orient", "gather", "consolidate", "prune"]
        assert [e.kind for e in events].count("phase-finished") == 4
        assert any(isinstance(m, DreamPane.PhaseProgress) for m in seen)
        planned = [m for m in seen if isinstance(m, DreamPane.Planned)]
        assert len(planned) == 1 and planned[0].kind == "dry" and planned[0].session is None
        # every bar full, the log streamed
        for phase in ("orient", "gather", "consolidate", "prune"):
            row = app.query_one(f"#phase-{phase}")
            assert row.done == row.total  # type: ignore[attr-defined]

        # the list is the core's plan, in order, with the reasons
        want = expected_plan(app)
        got = [(c.relpath, c.kind, r) for c, r in p.plan.items()]  # type: ignore[union-attr]
        assert got == [(c.relpath, c.kind, r) for c, r in want.items()]
        assert {(path, action) for path, action, _ in got} == {
            ("MEMORY.md", "modify"),
            ("project_vendor.md", "modify"),
            ("user_reviews.md", "modify"),
            ("user_reviews_again.md", "delete"),
        }
        options = app.query_one("#dream-changes", OptionList)
        assert options.option_count == len(got) + len(want.findings)
        first = str(options.get_option_at_index(0).prompt)
        assert "MEMORY.md" in first and "modify" in first
        # the diff of the highlighted change
        assert "--- a/MEMORY.md" in plain(app, "#dream-diff-text")
        await pilot.press("down")
        assert "-We agreed yesterday with their team" in plain(app, "#dream-diff-text")

    assert tree(app.locations.memory_dir) == before  # no lock, no file touched
    assert not (state_dir / "memdirs").exists() or not any((state_dir / "memdirs").rglob("entry.json"))


async def test_apply_changes_the_files_as_planned_then_undo_restores_the_tree(dream_app: Callable[..., MemtuiApp]) -> None:
    app = dream_app()
    memory_dir = app.locations.memory_dir
    before = tree(memory_dir)
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        p = await open_dream(app, pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: p.plan is not None)
        plan = p.plan
        assert plan is not None
        await pilot.press("a")
        await wait_until(pilot, lambda: any(isinstance(m, DreamPane.Applied) for m in seen))
        await pilot.pause()
        for change in plan.plan.changes:
            path = memory_dir / change.relpath
            if change.after is None:
                assert not path.exists()
            else:
                assert path.read_bytes() == change.after
        assert read_lock(memory_dir).exists  # the consolidation is recorded
        assert p.plan is None
        await wait_until(pilot, lambda: p.last_dream is not None)  # u has a dream to undo
        # the Memories pane re-scanned: the merged duplicate is gone from it
        memories = app.query_one(MemoriesPane)
        await wait_until(pilot, lambda: memories.catalog is not None and all(e.memory.relpath != "user_reviews_again.md" for e in memories.catalog.entries))

        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanPreview))
        title = app.screen.plan.title  # type: ignore[attr-defined]
        assert title.startswith("Undo “Dream (offline): ") and "Undo: " not in title
        assert {c.relpath for c in app.screen.plan.changes} == {c.relpath for c in plan.plan.changes}  # type: ignore[attr-defined]
        await pilot.press("y")
        await wait_until(pilot, lambda: any(isinstance(m, DreamPane.Undone) for m in seen))
        await pilot.pause()
        await wait_until(pilot, lambda: memories.catalog is not None and any(e.memory.relpath == "user_reviews_again.md" for e in memories.catalog.entries))

    assert tree(memory_dir) == before  # byte for byte, mtimes and the (absent) lock included


async def test_cancel_during_a_run_rolls_the_lock_back(dream_app: Callable[..., MemtuiApp]) -> None:
    app = dream_app(lock_age_h=72)  # consolidated three days ago: the time gate is open
    memory_dir = app.locations.memory_dir
    before = tree(memory_dir)
    reached, release = threading.Event(), threading.Event()

    def paused_offline(ctx: DreamContext, now: datetime, emit: Callable[[DreamEvent], None], cancel: threading.Event | None) -> DreamPlan:
        """The offline consolidator, holding still when the gather phase starts."""

        def hold(event: DreamEvent) -> None:
            emit(event)
            if isinstance(event, PhaseStarted) and event.phase == "gather":
                reached.set()
                release.wait(10)

        return consolidate_offline(ctx, now, hold, cancel)

    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        p = await open_dream(app, pilot)
        p.consolidator = paused_offline
        await pilot.press("R")  # through the gates: every one is open
        await wait_until(pilot, reached.is_set)
        held = read_lock(memory_dir)
        assert held.holder_pid == os.getpid() and held.mtime == pytest.approx(T)
        assert p.running == "run" and p.check_action("cancel", ()) is True
        await pilot.press("escape")
        release.set()
        await wait_until(pilot, lambda: any(isinstance(m, DreamPane.Stopped) for m in seen))
        await pilot.pause()
        stopped = next(m for m in seen if isinstance(m, DreamPane.Stopped))
        assert stopped.outcome == "cancelled"
        assert p.running is None and p.plan is None and p.session is None
        assert not any(isinstance(m, DreamPane.Planned) for m in seen)

    assert tree(memory_dir) == before  # the lock: same (empty) body, same mtime; no file touched


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["wide", "narrow"])
def test_dream_pane_snapshot(snap_compare: Any, dream_app: Callable[..., MemtuiApp], size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: pane(pilot.app).plan is not None, what="the dry run's plan")
        await settle(pilot)

    # after a dry run: gates open, the phases done, the plan with the index diff, the log
    assert snap_compare(dream_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_long_gate_reasons_scroll_and_leave_the_plan_list_its_rows(make_app, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.press("4")
        await settle(pilot)
        pane = app.query_one(DreamPane)
        await pilot.press("d")  # a dry run fills the plan list
        await wait_until(pilot, lambda: pane.plan is not None, what="the plan")
        await settle(pilot)
        pane.query_one("#dream-gates", Static).update("\n".join(f"reason {i}: a gate's reason that runs on and on" for i in range(40)))
        await pilot.pause()
        box = pane.query_one("#dream-gates-box")
        changes = pane.query_one("#dream-changes")
        assert box.size.height <= (14 if size == (120, 36) else 8)
        assert box.max_scroll_y > 0  # the rest is a scroll away
        assert changes.content_size.height >= 1
        await pilot.press("pagedown", "pageup", "end", "home")
        assert app.is_running

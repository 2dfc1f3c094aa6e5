"""A worker that raises, in any pane or screen, is shown within a second: a notification and
the pane's error line with the exception — never "computing…" forever. Each test makes the
core function a pane's worker calls raise, then does what starts that worker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from support.memories import NOW, write_transcript
from support.pilot import rendered, settle, wait_until
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widget import Widget

from memtui.core.extract import extract
from memtui.core.extract.inbox import Inbox
from memtui.tui.app import MemtuiApp
from memtui.tui.cascade import CascadePane
from memtui.tui.doctor import DoctorScreen
from memtui.tui.dream import DreamPane
from memtui.tui.inbox import InboxScreen
from memtui.tui.memories import MemoriesPane
from memtui.tui.pane import ErrorLine
from memtui.tui.recall import RecallPane

REASON = "the disk caught fire"


def explode(*args: object, **kwargs: object) -> Any:
    raise RuntimeError(REASON)


def error_line(node: Widget) -> str:
    """What ``node``'s error line shows ("" while it is hidden or not there)."""
    lines = list(node.query(ErrorLine))
    if not lines or not lines[0].has_class("-shown"):
        return ""
    return rendered(lines[0].content)


async def shows_failure(pilot: Pilot[None], seen: list[Message], node: Callable[[], Widget], start: Callable[[], Awaitable[object]]) -> str:
    """Run ``start``; within a second the error line of ``node()`` names the exception and an
    error notification says why. Returns the error line."""

    def notified() -> bool:
        return any(m.notification.severity == "error" and REASON in m.notification.message for m in seen if isinstance(m, Notify))

    await start()
    await wait_until(pilot, lambda: REASON in error_line(node()) and notified(), timeout=1.0, what="the error line and the notification")
    return error_line(node())


async def test_cascade(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memtui.tui.cascade.compute_cascade", explode)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        pane = app.query_one(CascadePane)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("1"))
        assert "Cannot compute the cascade: RuntimeError: the disk caught fire" in line
        assert not pane.loading and REASON in rendered(app.query_one("#cascade-summary").render())


async def test_memories(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        monkeypatch.setattr("memtui.tui.memories.load_catalog", explode)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("r"))
        assert "Cannot scan the memory dir" in line and not pane.loading
        # a scan that works again clears it
        monkeypatch.undo()
        await pilot.press("r")
        await wait_until(pilot, lambda: error_line(pane) == "" and len(pane.shown) == 5, what="the error cleared")


async def test_recall(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memtui.tui.recall.load_corpus", explode)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        pane = app.query_one(RecallPane)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("3"))
        assert "Cannot scan the memory dir" in line
        assert "scanning" not in rendered(app.query_one("#recall-status").render())


async def test_dream(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memtui.tui.dream.plan_dream", explode)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        pane = app.query_one(DreamPane)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("d"))
        assert "The dream failed" in line
        await wait_until(pilot, lambda: pane.running is None, what="the pane leaves its running state")
        assert pane.check_action("dry_run", ()) is True  # a new run may start


async def test_dream_gates(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        monkeypatch.setattr("memtui.tui.dream.check_gates", explode)
        pane = app.query_one(DreamPane)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("4"))  # shown: the gates are checked
        assert "Cannot check the gates" in line


async def test_doctor(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memtui.tui.doctor.run_doctor", explode)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        line = await shows_failure(pilot, seen, lambda: app.screen, lambda: pilot.press("D"))
        assert isinstance(app.screen, DoctorScreen) and "The doctor failed" in line
        assert "The doctor failed: RuntimeError" in rendered(app.screen.query_one("#doctor-summary").render())


async def test_inbox(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setattr(Inbox, "pending", explode)
    # the Memories pane's inbox badge counts through pending() too: keep its scan out of this test
    # (else its failure races the inbox screen's in settle)
    monkeypatch.setattr(Inbox, "count", lambda self: 0)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        line = await shows_failure(pilot, seen, lambda: app.screen, lambda: pilot.press("I"))
        assert isinstance(app.screen, InboxScreen) and "Cannot read the inbox" in line


async def test_inbox_source(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    app = make_app()
    loc = app.locations
    extract(write_transcript(tmp_path / "s1.jsonl", loc.project_root, "Remember that we never deploy on Fridays."),
            loc.memory_dir, loc.state_dir, NOW, extractor="offline")
    monkeypatch.setattr("memtui.tui.inbox.proposal_excerpt", explode)
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        line = await shows_failure(pilot, seen, lambda: app.screen, lambda: pilot.press("I"))  # the first proposal's source
        assert "Cannot read the source" in line


async def test_memories_usage(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's transcripts are read after each complete scan, in a worker of their own."""
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        monkeypatch.setattr("memtui.core.sessions.usage.UsageIndex.refresh", explode)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("r"))
        assert "Cannot read the agent's transcripts" in line and len(pane.shown) == 5  # the memories stay listed


async def test_cascade_cost(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memtui.core.audit.cost.startup_cost", explode)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        pane = app.query_one(CascadePane)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("1"))
        assert "Cannot count the cost of memory" in line


async def test_cascade_session(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memtui.core.audit.loaded.load_session", explode)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        pane = app.query_one(CascadePane)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("s"))
        assert "Cannot compare the session" in line
        assert REASON in rendered(app.query_one("#cascade-session-text").render())  # not "reading the session…"


async def test_recall_agreement(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memtui.core.audit.agreement.evaluate", explode)
    seen: list[Message] = []
    app = make_app()
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        pane = app.query_one(RecallPane)
        line = await shows_failure(pilot, seen, lambda: pane, lambda: pilot.press("3"))
        assert "Cannot score the agreement with the agent" in line

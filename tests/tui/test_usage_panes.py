"""The agent's own record in the panes, on real Claude Code 2.1.328 transcripts: the Memories
pane's "used" column, its sort and never-used filter, the preview's uses and `o` opening the
conversation at one; the Cascade pane's session comparison and cost line; the Recall pane's
agreement with the agent's own recall."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.pilot import plain, settle
from support.usage import rebuild_usage
from textual.widgets import DataTable

from memtui.core.places.flavor import get_flavor
from memtui.tui.app import MemtuiApp
from memtui.tui.memories import MemoriesPane


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemtuiApp:
    ws = rebuild_usage(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-02T00:00:00Z")
    return MemtuiApp.for_project(get_flavor("claude"), ws.proj, watch=False)


def _used_column(app: MemtuiApp) -> dict[str, str]:
    table = app.query_one("#memories-table", DataTable)
    pane = app.query_one(MemoriesPane)
    return {e.relpath: str(table.get_row_at(i)[2]) for i, e in enumerate(pane.shown)}


async def test_the_used_column_sort_and_never_used_filter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        assert pane.usage is not None
        used = _used_column(app)
        # hand counts (tests/core/sessions/test_usage.py): reference_dash recalled + read
        assert used["reference_dash.md"] == "2 · today"
        assert used["user_tz.md"] == "never"
        await pilot.press("N")
        await settle(pilot)
        assert sorted(e.relpath for e in pane.shown) == ["team/reference_runbook.md", "user_tz.md"]
        await pilot.press("N", "U")
        await settle(pilot)
        assert pane.sort_by == "most-used" and pane.shown[0].relpath == "reference_dash.md"
        await pilot.press("U")
        await settle(pilot)
        assert pane.sort_by == "least-used" and {e.relpath for e in pane.shown[:2]} == {"user_tz.md", "team/reference_runbook.md"}


async def test_the_preview_lists_uses_and_o_opens_the_conversation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        table = app.query_one("#memories-table", DataTable)
        table.move_cursor(row=next(i for i, e in enumerate(pane.shown) if e.relpath == "reference_dash.md"))
        await settle(pilot)
        text = plain(app, "#preview-fields")
        assert "recalled 1 · read 1 · written 0 — 2 of 4 session(s)" in text
        assert "(sub-agent)" in text and "o opens the conversation" in text
        await pilot.press("o")
        await settle(pilot)
        from memtui.tui.widgets.usage_view import UsesDialog

        assert isinstance(app.screen, UsesDialog)
        assert [d.use.kind for d in app.screen.uses] == ["read", "recalled"]  # newest first
        await pilot.press("enter")  # the sub-agent's Read
        await settle(pilot)
        from memtui.tui.inbox import SourceDialog

        assert isinstance(app.screen, SourceDialog)
        excerpt = app.screen.excerpt
        assert excerpt is not None and excerpt.error is None
        source = next(t for t in excerpt.turns if t.is_source)
        assert "[Read" in source.text and "reference_dash.md" in source.text


async def test_the_cascade_pane_compares_the_last_session_and_shows_the_cost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("1")
        await settle(pilot)
        from memtui.tui.cascade import CascadePane

        pane = app.query_one(CascadePane)
        cost = plain(app, "#cascade-cost")
        # no API key: estimated (~); the latest session's first request as recorded: 12,899
        assert cost.startswith("memory at session start: ~") and "12,899 input tokens" in cost
        await pilot.press("s")
        await settle(pilot)
        assert pane.session is not None and pane.session.session_id == pane.session.transcript.stem
        text = plain(app, "#cascade-session-text")
        assert "no difference: memtui predicts what this session loaded" in text
        assert "MEMORY.md" in text
        await pilot.press("S")
        await settle(pilot)
        from memtui.tui.widgets.session_view import SessionPicker

        assert isinstance(app.screen, SessionPicker) and len(app.screen.sessions) == 4
        svc = next(i for i, t in enumerate(app.screen.sessions) if t.project_dir.name.endswith("-svc"))
        app.screen.query_one("#session-options").highlighted = svc  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(pilot)
        assert pane.session is not None and pane.session.cwd is not None and pane.session.cwd.endswith("/proj/svc")
        text = plain(app, "#cascade-session-text")
        assert "1 difference(s), 1 explained" in text  # recall was on then: no MEMORY.md


async def test_the_recall_pane_scores_memtui_against_the_agents_recall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("3")
        await settle(pilot)
        from memtui.tui.recall import RecallPane

        pane = app.query_one(RecallPane)
        assert pane.agreement is not None and len(pane.agreement.prompts) == 1
        line = plain(app, "#recall-agreement")
        assert "1 prompt(s) in 1 of 4 session(s)" in line and "hybrid needs a key" in line
        await pilot.press("ctrl+l")
        await settle(pilot)
        detail = plain(app, "#recall-agreement")
        assert "claude  user_role.md, reference_dash.md, feedback_tests.md, project_kafka.md" in detail


async def test_every_new_key_is_in_the_palette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        helps = [c.help for c in app.get_system_commands(app.screen)]
        for key in ("( U )", "( N )", "( o )", "( s )", "( S )", "( ^l )"):  # the footer's key names
            assert any(h.endswith(key) for h in helps), key

"""The claude flavor in the app: the header names the Claude Code release memtui models, and
the Recall pane says whether this user's Claude Code recalls (its cached feature flag) — when
it does not, the picks are labelled as what recall would pick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.memories import NOW, write_memory_dir
from support.pilot import plain, settle, type_text
from textual.widgets import Tree

from memtui.core.places.flavor import CLAUDE
from memtui.tui.app import MemtuiApp
from memtui.tui.cascade import CascadePane
from tests.tui.test_recall_pane import open_recall, result_for


def notice(app: MemtuiApp) -> str:
    return plain(app, "#recall-notice")


@pytest.mark.parametrize("flag", [False, True])
async def test_recall_pane_reads_the_gate(isolated_env: Path, monkeypatch: pytest.MonkeyPatch, flag: bool) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude` to ask for its version
    project = isolated_env / "project"
    project.mkdir()
    memory_dir = isolated_env / "memory"
    write_memory_dir(memory_dir)
    (isolated_env / ".claude.json").write_text(json.dumps({"cachedGrowthBookFeatures": {"tengu_moth_copse": flag}}))
    app = MemtuiApp.for_project(CLAUDE, project, memory_dir=memory_dir, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        assert "models Claude Code 2.1.332" in app.sub_title
        await open_recall(app, pilot)
        await type_text(pilot, "latency board for the backend engineer")
        result = await result_for(app, pilot, "latency board for the backend engineer")
        assert result.picks  # the preview works either way
        text = notice(app)
        if flag:
            assert "Claude Code 2.1.332 recalls memories for you: this feature is on for your account;" in text and not result.would_only
            assert "details: flag tengu_moth_copse: true in ~/.claude.json (cachedGrowthBookFeatures)" in text.splitlines()
        else:
            assert "Claude Code 2.1.332 does not recall memories for you: this feature is off for your account." in text
            lines = text.splitlines()  # the flag's name: on the details line only
            assert [line for line in lines if "tengu_moth_copse" in line] == [
                "details: flag tengu_moth_copse: false in ~/.claude.json (cachedGrowthBookFeatures); CLAUDE_MEMORY_STORES is not set"]
            assert "what recall would pick" in text and result.would_only


async def test_cascade_reads_help_names_the_flavors_instruction_file(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    monkeypatch.setenv("PATH", "/nonexistent")
    project = isolated_env / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Use pnpm.\n")
    app = MemtuiApp.for_project(CLAUDE, project, memory_dir=isolated_env / "memory", watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        pane = app.query_one(CascadePane)
        tree = app.query_one("#cascade-tree", Tree)
        assert tree.root.data is None
        pane._show_node(tree.root)  # the reads help: what a node without a file or layer shows
        await pilot.pause()
        text = plain(app, "#cascade-detail-text")
        assert "nested CLAUDE.md files" in text and "AGENT.md" not in text

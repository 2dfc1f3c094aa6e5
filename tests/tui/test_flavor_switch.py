"""The flavor in the app: the header says which and why (``--flavor auto``); an empty memory
dir while the other flavor has memories here says so with the key that switches; ``ctrl+f``
(and the palette) opens the same project with the other flavor."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.memories import NOW
from support.pilot import plain, settle, wait_until

from memtui.core.places.autoflavor import choose_flavor
from memtui.core.places.flavor import AGENT
from memtui.tui.app import MemtuiApp
from memtui.tui.memories import MemoriesPane


def ascii_slug(path: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(path))


@pytest.fixture
def project(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with CLAUDE.md and one memory in Claude Code's memory dir."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude` to ask for its version
    root = isolated_env / "proj"
    root.mkdir()
    (root / "CLAUDE.md").write_text("# rules\n")
    memory = isolated_env / ".claude" / "projects" / ascii_slug(root) / "memory"
    memory.mkdir(parents=True)
    (memory / "user_role.md").write_text("---\nname: role\ndescription: the user's role\ntype: user\n---\nData engineer.\n")
    return root


async def test_auto_opens_a_claude_project_as_claude_and_says_why(project: Path) -> None:
    app = MemtuiApp.for_project(choose_flavor(None, project), project, watch=False)
    async with app.run_test(size=(160, 36)) as pilot:
        await settle(pilot)
        assert "claude flavor (auto: Claude Code's CLAUDE.md, ~/.claude/projects/" in app.sub_title
        pane = app.query_one(MemoriesPane)
        assert pane.catalog is not None and [e.memory.name for e in pane.catalog.entries] == ["role"]


async def test_an_empty_agent_dir_points_at_claude_and_ctrl_f_switches(project: Path, isolated_env: Path) -> None:
    (isolated_env / ".agent" / "projects" / ascii_slug(project) / "memory").mkdir(parents=True)
    app = MemtuiApp.for_project(AGENT, project, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        text = " ".join(plain(app, "#preview-fields", width=60).split())
        assert text.startswith("No memories here. This is the agent flavor (--flavor agent), but the claude flavor has files")
        assert "Press ctrl+f to switch to claude (or run memtui --flavor claude)." in text
        await pilot.press("ctrl+f")
        await pilot.pause()
        await wait_until(pilot, lambda: app.locations.flavor.name == "claude" and app.query(MemoriesPane).first().catalog is not None)
        pane = app.query_one(MemoriesPane)
        assert [e.memory.name for e in pane.catalog.entries] == ["role"]
        assert "claude flavor (switched with ctrl+f)" in app.sub_title


async def test_ctrl_f_over_the_doctor_asks_to_close_it_first(project: Path) -> None:
    from memtui.tui.doctor import DoctorScreen

    app = MemtuiApp.for_project(AGENT, project, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen), what="the doctor")
        await pilot.press("ctrl+f")  # the doctor still running, or done: the same answer
        await pilot.pause()
        assert isinstance(app.screen, DoctorScreen) and app.screen.query("#doctor-summary")
        assert app.locations.flavor is AGENT
        assert [n.message for n in app._notifications][-1] == "Close this screen first (esc), then press ctrl+f."
        await settle(pilot)
        assert app.is_running


async def test_ctrl_f_with_the_key_panel_open_closes_it_and_switches(project: Path) -> None:
    from memtui.tui.widgets.keys_panel import key_panel

    app = MemtuiApp.for_project(AGENT, project, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: key_panel(app.screen) is not None, what="the key panel")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: app.locations.flavor.name == "claude", what="the switch")
        await settle(pilot)
        assert key_panel(app.screen) is None and app.is_running


async def test_ctrl_f_right_at_startup_waits_for_the_panes(project: Path) -> None:

    app = MemtuiApp.for_project(AGENT, project, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        # usually the panes shown later are still waiting to be mounted here (on a busy machine
        # they may be in place already: the test then checks the plain case)
        await app.action_switch_flavor()
        await settle(pilot)
        assert app.locations.flavor.name == "claude" and app.is_running

"""The doctor's findings view: grouped by file, a safe fix previewed then applied, undoable."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import Tree

from support.pilot import settle

from memtui.core.doctor import Finding
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import PlanPreview
from memtui.tui.doctor import DoctorScreen


async def open_doctor(app: MemtuiApp, pilot: Pilot[None]) -> Tree[Finding | None]:
    """Open the doctor from the Memories list and wait for its report; its tree of findings."""
    await settle(pilot)
    await pilot.press("D")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, DoctorScreen)
    await settle(pilot)
    return screen.query_one("#doctor-tree", Tree)


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


async def test_the_doctor_says_once_where_the_code_moved(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    from support.pilot import wait_until

    from memtui.core.places.flavor import AGENT

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    project = tmp_path / "project"
    (project / "game").mkdir(parents=True)
    subprocess.run([*git, "init", "-q", str(project)], check=True)
    for name in ("a", "b", "c"):
        (project / "game" / f"{name}.ts").write_text(f"export const {name} = 1;\n")
    subprocess.run([*git, "-C", str(project), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(project), "commit", "-q", "-m", "game"], check=True)
    subprocess.run([*git, "-C", str(project), "mv", "game", "engine"], check=True)
    subprocess.run([*git, "-C", str(project), "commit", "-q", "-m", "move"], check=True)
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    (memory_dir / "project_game.md").write_text("---\nname: g\ndescription: d\ntype: project\n---\n\nThe loop is `game/a.ts`, input `game/b.ts`, audio `game/c.ts`.\n\n**Why:** w\n\n**How to apply:** h\n")
    (memory_dir / "MEMORY.md").write_text("- [g](project_game.md) — the game loop\n")
    monkeypatch.setenv("MEMTUI_NOW", "2026-03-10T12:00:00+00:00")
    app = MemtuiApp.for_project(AGENT, project, memory_dir=memory_dir, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and app.screen.report is not None, what="the doctor's report")
        await settle(pilot)
        tree = app.screen.query_one("#doctor-tree", Tree)
        [moved] = [n for n in tree.root.children if "the code moved" in str(n.label)]
        [leaf] = moved.children
        assert "game/ → engine/" in str(leaf.label) and "×3" in str(leaf.label)
        [memory] = [n for n in tree.root.children if "project_game.md" in str(n.label)]
        assert len(memory.children) == 3  # each stale path still listed under its memory


async def test_after_a_fix_the_cursor_is_on_the_finding_that_followed_the_fixed_one(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        tree = await open_doctor(app, pilot)

        def leaves() -> list:  # type: ignore[type-arg]
            return [leaf for group in tree.root.children for leaf in group.children if leaf.data is not None]

        before = leaves()
        at = next(i for i, leaf in enumerate(before) if leaf.data.code == "type-nested")
        follower = before[at + 1].data
        assert at > 0  # not the first row: a jump to the top would show
        tree.move_cursor(before[at])
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        await pilot.press("y")
        await settle(pilot)
        assert "type-nested" not in [leaf.data.code for leaf in leaves()]  # fixed, re-run
        selected = tree.cursor_node
        assert selected is not None and selected.data is not None
        assert (selected.data.code, selected.data.path, selected.data.message) == (follower.code, follower.path, follower.message)


async def test_f_on_a_file_row_fixes_its_one_finding_with_a_fix(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        tree = await open_doctor(app, pilot)
        row = next(group for group in tree.root.children if str(group.label).startswith("▲ feedback_nested.md"))
        tree.move_cursor(row)  # the file's row, not its finding's
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        assert "+type: feedback" in app.screen.plan.diff()

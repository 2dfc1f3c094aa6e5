"""Where the Memories pane's cursor is after a change: it stays where the user was.

The list of ``support.memories``, newest first: user_role.md, feedback_terse.md,
project_freeze.md, reference_grafana.md, feedback_nested.md (rows 0-4).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import Input, TextArea, Tree

from support.pilot import settle, wait_until

from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import EditorScreen, NewMemoryDialog, PlanPreview
from memtui.tui.doctor import DoctorScreen
from memtui.tui.memories import MemoriesPane
from memtui.tui.widgets.memory_table import MemoryTable

ROWS = ["user_role.md", "feedback_terse.md", "project_freeze.md", "reference_grafana.md", "feedback_nested.md"]


async def select(app: MemtuiApp, pilot: Pilot[None], relpath: str) -> MemoriesPane:
    pane = app.query_one(MemoriesPane)
    assert [e.relpath for e in pane.shown] == ROWS
    app.query_one(MemoryTable).move_cursor(row=ROWS.index(relpath))
    await pilot.pause()
    return pane


def cursor(app: MemtuiApp) -> tuple[int, str | None]:
    """The cursor's row and the memory on it."""
    pane = app.query_one(MemoriesPane)
    entry = pane.selected_entry()
    return app.query_one(MemoryTable).cursor_row, entry.relpath if entry else None


async def delete_selected(app: MemtuiApp, pilot: Pilot[None], relpath: str) -> None:
    pane = await select(app, pilot, relpath)
    await pilot.press("d")
    await wait_until(pilot, lambda: isinstance(app.screen, PlanPreview), what="the delete's preview")
    await pilot.press("y")
    await wait_until(pilot, lambda: relpath not in [e.relpath for e in pane.shown], what=f"{relpath} gone from the list")
    await settle(pilot)


async def test_after_a_delete_the_cursor_is_on_the_row_that_took_its_place(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await delete_selected(app, pilot, "project_freeze.md")  # row 2 of 5
        assert cursor(app) == (2, "reference_grafana.md")  # the next one moved up into row 2


async def test_after_deleting_the_last_row_the_cursor_is_on_the_one_before(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await delete_selected(app, pilot, "feedback_nested.md")  # row 4, the last
        assert cursor(app) == (3, "reference_grafana.md")


async def test_after_a_doctor_fix_the_cursor_is_on_the_same_memory(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(app, pilot, "reference_grafana.md")  # row 3; the fix is on another memory
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and app.screen.report is not None, what="the doctor's report")
        await settle(pilot)
        doctor = app.screen
        tree = doctor.query_one("#doctor-tree", Tree)
        nested = next(node for node in tree.root.children if str(node.label).startswith("▸ feedback_nested.md") or "feedback_nested.md" in str(node.label))
        codes = [leaf.data.code for leaf in nested.children]  # type: ignore[union-attr]
        tree.move_cursor(nested.children[codes.index("type-nested")])
        await pilot.pause()
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanPreview), what="the fix's preview")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.screen is doctor, what="back in the doctor")
        await settle(pilot)
        assert "\ntype: feedback\n" in (app.locations.memory_dir / "feedback_nested.md").read_text()
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, DoctorScreen), what="the doctor closed")
        await settle(pilot)
        await settle(pilot)
        assert cursor(app) == (3, "reference_grafana.md")


async def new_memory_draft(app: MemtuiApp, pilot: Pilot[None]) -> None:
    """``n``, a name and a description: the editor opens on the new memory's draft."""
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(app.screen, NewMemoryDialog), what="the new-memory dialog")
    dialog = app.screen
    dialog.query_one("#new-name", Input).value = "Deploy day"
    dialog.query_one("#new-description", Input).value = "Deploys go out on Mondays"
    dialog.query_one("#new-description", Input).focus()
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen), what="the editor on the draft")


async def test_after_a_refused_save_of_a_new_memory_the_cursor_is_on_the_same_memory(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(app, pilot, "reference_grafana.md")
        await new_memory_draft(app, pilot)
        area = app.screen.query_one(TextArea)
        area.text = area.text.replace("name: Deploy day\n", "name:\n")  # no name: the save is refused
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(n.title == "Not created" for n in app._notifications), what="the refusal")
        assert isinstance(app.screen, EditorScreen)  # the text kept in the editor
        await settle(pilot)
        await pilot.press("escape")  # edited: asks before dropping it
        await pilot.pause()
        await pilot.press("y")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditorScreen), what="the editor closed")
        await settle(pilot)
        assert not (app.locations.memory_dir / "feedback_deploy_day.md").exists()
        assert cursor(app) == (3, "reference_grafana.md")


async def test_after_a_refused_save_the_editor_goes_on_where_the_user_was(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await new_memory_draft(app, pilot)
        first = app.screen
        area = first.query_one(TextArea)
        template = area.text
        last = template.count("\n") - 1  # the draft's last line: the template's body
        area.move_cursor((last, 0))
        await pilot.press("N", "o", "t", "e", "space")  # typed there; the placeholders stay: the save is refused
        typed = area.text
        at = area.cursor_location
        assert at == (last, 5) and typed != template
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(n.title == "Not created" for n in app._notifications), what="the refusal")
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen) and app.screen is not first, what="the editor again")
        again = app.screen.query_one(TextArea)
        await pilot.pause()
        assert again.text == typed
        assert again.cursor_location == at  # not the top of the file
        await pilot.press("x")  # typing goes on at the same place
        assert again.text.splitlines()[last].startswith("Note x")
        await pilot.press("ctrl+z")  # and the undo history came along: back to before the x…
        await pilot.press("ctrl+z")  # …and before what was typed in the first editor
        assert again.text == template

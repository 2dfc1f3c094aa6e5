"""The shared dialogs, driven with Pilot: the new-memory form keeps what was typed when a field
is missing, the plan preview fits small terminals, the trash counts in words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Label, Static
from textual.widgets._footer import FooterKey

from support.pilot import settle, type_text

from memtui.core.writes.edits import FileChange, Plan
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import EditorScreen, NewMemoryDialog, PlanPreview, TrashDialog
from memtui.tui.memories import MemoriesPane


def text_of(widget: Static) -> str:
    return str(widget.render())


# ----- new memory ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "description", "missing", "kept"),
    [
        ("", "Deploys go out on Mondays", "new-name", "new-description"),
        ("Deploy day", "", "new-description", "new-name"),
        ("   ", "  ", "new-name", None),
    ],
)
async def test_create_with_a_missing_field_keeps_the_dialog_and_says_what_is_missing(
    make_app: Callable[[], MemtuiApp], name: str, description: str, missing: str, kept: str | None
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        before = sorted(p.name for p in Path(app.locations.memory_dir).iterdir())
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NewMemoryDialog)
        dialog = app.screen
        dialog.query_one("#new-name", Input).value = name
        dialog.query_one("#new-description", Input).value = description
        await pilot.click("#create")
        await pilot.pause()
        assert app.screen is dialog  # still open
        assert dialog.query_one("#new-name", Input).value == name  # nothing lost
        assert dialog.query_one("#new-description", Input).value == description
        error = dialog.query_one(f"#{missing}-error", Static)
        assert "required" in text_of(error)
        assert app.focused is dialog.query_one(f"#{missing}", Input)
        if kept is not None:
            assert text_of(dialog.query_one(f"#{kept}-error", Static)) == ""
        assert sorted(p.name for p in Path(app.locations.memory_dir).iterdir()) == before
        # filling the field in clears its message, and Create then goes through
        dialog.query_one("#new-name", Input).value = name.strip() or "Deploy day"
        dialog.query_one("#new-description", Input).value = description.strip() or "Deploys go out on Mondays"
        await pilot.pause()
        assert text_of(dialog.query_one(f"#{missing}-error", Static)) == ""
        dialog.query_one("#new-description", Input).focus()
        await pilot.press("enter")  # (a second click on Create within 0.2 s is ignored by Button)
        await settle(pilot)
        # on to the editor with the draft; nothing is written before the body is
        assert isinstance(app.screen, EditorScreen)
        assert sorted(p.name for p in Path(app.locations.memory_dir).iterdir()) == before


async def test_enter_in_an_empty_description_keeps_the_dialog(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        dialog = app.screen
        await type_text(pilot, "Deploy")
        await pilot.press("enter", "enter")  # name, then enter in the empty description
        await pilot.pause()
        assert app.screen is dialog
        assert dialog.query_one("#new-name", Input).value == "Deploy"
        assert "required" in text_of(dialog.query_one("#new-description-error", Static))


# ----- trash -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "title"), [(0, "Trash — empty"), (1, "Trash — 1 deleted memory"), (2, "Trash — 2 deleted memories")])
async def test_trash_title_counts_in_words(make_app: Callable[[], MemtuiApp], count: int, title: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        for relpath in ["feedback_terse.md", "project_freeze.md"][:count]:
            pane = app.query_one(MemoriesPane)
            table = app.query_one("#memories-table", DataTable)
            table.move_cursor(row=[e.relpath for e in pane.shown].index(relpath))
            await pilot.press("d")
            await pilot.pause()
            await pilot.press("y")
            await settle(pilot)
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, TrashDialog)
        assert str(app.screen.query_one(".dialog-title", Label).render()) == title


# ----- plan preview ----------------------------------------------------------------------------


def big_plan(lines: int = 300) -> Plan:
    """A doctor-sized plan: a 300-line diff over three files, with notes."""
    before = "".join(f"line {i}\n" for i in range(lines // 3)).encode()
    after = "".join(f"line {i} fixed\n" for i in range(lines // 3)).encode()
    changes = tuple(FileChange(f"feedback_{k}.md", before, after) for k in range(3))
    return Plan("Doctor: 12 safe fixes", changes, notes=("3 index lines re-written", "1 dangling link dropped"))


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_plan_preview_keeps_title_and_buttons_on_screen_with_a_big_diff(make_app: Callable[[], MemtuiApp], size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        answers: list[bool | None] = []
        app.push_screen(PlanPreview(big_plan()), answers.append)
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        dialog = screen.query_one("#plan-dialog")
        for widget in (screen.query_one(".dialog-title"), screen.query_one("#apply"), screen.query_one("#cancel")):
            assert dialog.content_region.contains_region(widget.region), widget
            assert screen.get_widget_at(*widget.region.offset)[0] is widget
        diff = screen.query_one("#plan-diff")
        assert diff.max_scroll_y > 0  # the diff scrolls inside its share, the dialog does not
        assert dialog.max_scroll_y == 0
        footer = {k.key: k.description for k in screen.query(FooterKey)}
        assert footer.get("y") == "Apply"
        await pilot.press("y")
        await pilot.pause()
        assert answers == [True]


async def test_plan_preview_shrinks_to_a_short_diff(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.push_screen(PlanPreview(Plan("Re-type user_role.md", (FileChange("user_role.md", b"type: User\n", b"type: user\n"),))))
        await pilot.pause()
        await pilot.pause()
        diff = app.screen.query_one("#plan-diff")
        assert diff.outer_size.height <= 10 and diff.max_scroll_y == 0


@pytest.mark.parametrize("size", [(140, 40), (80, 24)])
async def test_a_long_dialog_question_wraps_instead_of_being_cut(make_app: Callable[[], MemtuiApp], size: tuple[int, int]) -> None:
    from memtui.tui.dialogs import DiscardDialog

    question = "Drop your edit of feedback_pin_pytest_version.md and reload it from disk?"  # 73 characters
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.push_screen(DiscardDialog(question, confirm_label="Drop and reload", keep_label="Back"))
        await pilot.pause()
        title = app.screen.query_one(".dialog-title", Label)
        dialog = app.screen.query_one("#discard-dialog")
        # the dialog's inner width (76 columns less border and padding) is under 73: two lines
        assert title.content_region.width <= dialog.content_region.width < len(question)
        assert title.content_region.height == 2


@pytest.mark.parametrize(("key", "dialog"), [("m", "TextPrompt"), ("y", "TypePicker"), ("n", "NewMemoryDialog"), ("z", "TrashDialog")])
async def test_a_dialog_footer_shows_its_own_keys_not_the_lists(make_app: Callable[[], MemtuiApp], key: str, dialog: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        assert type(screen).__name__ == dialog
        footer = {k.key: k.description for k in screen.query(FooterKey)}
        assert footer.get("escape") == "Cancel" or "escape" in footer, footer
        assert "t" not in footer and "slash" not in footer  # the Memories list's keys are not this dialog's

"""Focus after switching panes, leaving text boxes, and the palette's way out of a text box —
driven with Pilot as a user would (keys only)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TabbedContent

from support.pilot import palette_highlights, settle, type_text, wait_until

from memtui.tui.app import MemtuiApp
from memtui.tui.cascade import CascadePane
from memtui.tui.memories import MemoriesPane

# the widget each pane's keys start from
PANE_FOCUS = {"1": "cascade-tree", "2": "memories-table", "4": "dream-changes"}


def focused_id(app: MemtuiApp) -> str | None:
    return app.focused.id if app.focused is not None else None


def active(app: MemtuiApp) -> str:
    return app.query_one("#panes", TabbedContent).active


@pytest.mark.parametrize("away", ["1", "3", "4"])
async def test_memories_table_has_focus_after_switching_back(make_app: Callable[[], MemtuiApp], away: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(away)
        await settle(pilot)
        if away == "3":
            await pilot.press("escape")  # out of the query box, so the digit switches panes
        await pilot.press("2")
        await settle(pilot)
        assert active(app) == "memories"
        assert focused_id(app) == "memories-table"


@pytest.mark.parametrize("key", ["1", "4"])
async def test_each_pane_focuses_its_main_widget_when_shown(make_app: Callable[[], MemtuiApp], key: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("/")  # start from the Memories search box
        await pilot.press("escape", key)
        await settle(pilot)
        assert focused_id(app) == PANE_FOCUS[key]


@pytest.mark.parametrize(("key", "widget"), [("1", "cascade-tree"), ("3", "recall-query"), ("4", "dream-changes")])
async def test_a_pane_shown_before_it_is_built_still_gets_the_keys(make_app: Callable[[], MemtuiApp], key: str, widget: str) -> None:
    """The panes not shown at start are built after the first screen is drawn; a digit pressed
    at once shows the pane, and once it is there its main widget has the focus."""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(key)  # no settling first
        await wait_until(pilot, lambda: focused_id(app) == widget, what=f"{widget} focused")
        assert active(app) == {"1": "cascade", "3": "recall", "4": "dream"}[key]


async def test_escape_leaves_the_recall_query_box(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert focused_id(app) == "recall-query"
        await pilot.press("g", "o", "escape")
        await pilot.pause()
        assert focused_id(app) == "recall-results"
        assert app.query_one("#recall-query", Input).value == "go"
        await pilot.press("2")  # the digit now switches panes
        await settle(pilot)
        assert active(app) == "memories" and focused_id(app) == "memories-table"


async def test_back_on_recall_with_a_query_the_pane_keys_act_and_the_query_stays(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        await type_text(pilot, "how do we run tests")
        await pilot.press("escape", "4")
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert focused_id(app) == "recall-results"
        await pilot.press("1")  # a pane key, not text that replaces the query
        await settle(pilot)
        assert active(app) == "cascade"
        assert app.query_one("#recall-query", Input).value == "how do we run tests"
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("slash", "s")  # / goes back to the box: typing adds to the query
        assert focused_id(app) == "recall-query"
        assert app.query_one("#recall-query", Input).value == "how do we run testss"


@pytest.mark.parametrize("pane", ["Cascade", "Memories", "Recall", "Dream"])
async def test_palette_goes_to_each_pane_from_a_text_box(make_app: Callable[[], MemtuiApp], pane: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        if pane == "Memories":  # start in the Recall query box
            await pilot.press("3")
            await settle(pilot)
            box = "#recall-query"
        else:  # start in the Memories search box
            await pilot.press("/")
            box = "#memories-search"
        await pilot.press("1")  # a digit in a text box stays text
        assert app.focused is app.query_one(box, Input) and app.query_one(box, Input).value == "1"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, f"go to pane: {pane}".lower())
        await palette_highlights(pilot, f"Go to pane: {pane}")  # the palette searches in a worker
        await pilot.press("enter")
        await settle(pilot)
        assert active(app) == pane.lower()
        assert focused_id(app) == {"Cascade": "cascade-tree", "Memories": "memories-table", "Recall": "recall-query", "Dream": "dream-changes"}[pane]


@pytest.mark.parametrize("key", ["enter", "down"])
async def test_memories_search_hands_focus_to_the_table_keeping_the_filter(make_app: Callable[[], MemtuiApp], key: str) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("/")
        await type_text(pilot, "grafana")
        await pilot.press(key)
        await pilot.pause()
        assert focused_id(app) == "memories-table"
        assert app.query_one("#memories-search", Input).value == "grafana"
        assert [e.relpath for e in app.query_one(MemoriesPane).shown] == ["reference_grafana.md"]
        assert app.query_one("#memories-table", DataTable).cursor_row == 0


async def test_cascade_is_recomputed_when_shown_again(make_app: Callable[[], MemtuiApp]) -> None:
    """A memory deleted in the Memories pane leaves the index the Cascade shows at once."""
    def index_text(app: MemtuiApp) -> str:
        cascade = app.query_one(CascadePane).cascade
        assert cascade is not None
        return next(f.content for f in cascade.files if f.path.endswith("MEMORY.md"))

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        assert "feedback_terse.md" in index_text(app)
        await pilot.press("2")
        await settle(pilot)
        table = app.query_one("#memories-table", DataTable)
        table.move_cursor(row=[e.relpath for e in app.query_one(MemoriesPane).shown].index("feedback_terse.md"))
        await pilot.press("d", "y")  # move to the trash: its index line goes too
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        assert "feedback_terse.md" not in index_text(app)
        assert focused_id(app) == "cascade-tree"


async def test_a_palette_command_of_another_pane_shows_it_then_acts(make_app: Callable[[], MemtuiApp]) -> None:
    """From the Memories pane, "Cascade: simulate a read" switches to the Cascade pane and leaves
    the focus in its reads box (not on the tree the pane focuses when shown)."""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "cascade: simulate a read")
        await palette_highlights(pilot, "Cascade: simulate a read")
        await pilot.press("enter")
        await settle(pilot)
        assert active(app) == "cascade"
        await wait_until(pilot, lambda: focused_id(app) == "cascade-reads", what="the reads box focused")


# pane key -> (its text box, the key that focuses it from the pane, where esc leaves it for)
TEXT_BOXES = {
    "1": ("cascade-reads", "/", "cascade-tree"),
    "2": ("memories-search", "/", "memories-table"),
    "3": ("recall-query", "/", "recall-results"),
}


@pytest.mark.parametrize("pane", sorted(TEXT_BOXES))
async def test_first_escape_leaves_a_text_box_keeping_its_text_the_second_clears_it(make_app: Callable[[], MemtuiApp], pane: str) -> None:
    box_id, focus_key, leave_to = TEXT_BOXES[pane]
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(pane)
        await settle(pilot)
        if focused_id(app) != box_id:
            await pilot.press(focus_key)
            await pilot.pause()
        assert focused_id(app) == box_id
        await type_text(pilot, "zz")
        await pilot.press("escape")
        await pilot.pause()
        box = app.query_one(f"#{box_id}", Input)
        assert focused_id(app) == leave_to and box.value == "zz"  # left, not cleared
        await pilot.press("escape")
        await settle(pilot)
        assert box.value == ""  # the second esc clears
        await pilot.press("4")  # the pane keys work again: a digit switches panes
        await settle(pilot)
        assert active(app) == "dream"

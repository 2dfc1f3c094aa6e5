"""The key panel (``?``) lies over the panes without moving them, and what startup built is kept
out of the garbage collector's full passes: the two costs that made the first keys slow (the
figures are in benchmarks/README.md, "Key to screen")."""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import Footer, Header

from support.pilot import settle

from memtui.tui.app import MemtuiApp
from memtui.tui.widgets.keys_panel import PaneBindingsTable, PaneKeys


def regions(app: MemtuiApp) -> dict[str, object]:
    """Where each lasting part of the screen is: the widgets with an id, the header and the
    footer (the footer's keys and a preview's paragraphs are rebuilt as they change)."""
    found: dict[str, object] = {f"#{w.id}": w.region for w in app.screen.query("*") if w.id and w.display}
    found.update({type(w).__name__: w.region for w in (app.screen.query_one(Header), app.screen.query_one(Footer))})
    return found


async def steady_regions(pilot: Pilot[None]) -> dict[str, object]:
    """The regions once the screen has stopped changing (the preview is drawn in a worker)."""
    last: dict[str, object] | None = None
    for _ in range(20):
        await settle(pilot)
        now = regions(pilot.app)
        if now == last:
            return now
        last = now
    raise AssertionError("the screen kept changing")


def panel_lines(panel: PaneKeys) -> list[str]:
    strips = panel.query_one(PaneBindingsTable).render_lines(panel.query_one(PaneBindingsTable).region.reset_offset)
    return [strip.text.rstrip() for strip in strips]


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
async def test_key_panel_lies_over_the_panes_and_moves_nothing(make_app: Callable[[], MemtuiApp], size: tuple[int, int]) -> None:
    """Opening the panel re-laid out the whole screen when it split it (every widget got a new
    width); over the panes, every widget keeps its place and size, the header and the footer stay
    in sight, and the pane's own keys come first."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        before = await steady_regions(pilot)
        await pilot.press("question_mark")
        assert await steady_regions(pilot) == before
        panel = app.screen.query_one(PaneKeys)
        header, footer = app.screen.query_one(Header).region, app.screen.query_one(Footer).region
        assert panel.region.right == size[0]
        assert panel.region.y == header.bottom
        assert panel.region.bottom == footer.y
        lines = [line.strip() for line in panel_lines(panel) if line.strip()]
        assert lines[0] == "keys that work here"
        assert any(line.startswith("/ Search") for line in lines[:8]), lines[:8]
        await pilot.press("question_mark")
        await settle(pilot)
        assert not app.screen.query(PaneKeys)
        assert await steady_regions(pilot) == before


async def test_key_panel_follows_the_pane_shown(make_app: Callable[[], MemtuiApp]) -> None:
    """Left open, the panel lists the keys of the pane switched to (it is drawn anew when the
    active bindings change)."""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        panel = app.screen.query_one(PaneKeys)
        assert any(line.strip().startswith("/ Search") for line in panel_lines(panel))
        await pilot.press("1")
        await settle(pilot)
        lines = [line.strip() for line in panel_lines(panel)]
        assert any(line.startswith("t Tree") for line in lines), lines
        assert not any(line.startswith("/ Search") for line in lines)


async def test_what_startup_built_is_out_of_full_collections_until_the_app_closes(make_app: Callable[[], MemtuiApp]) -> None:
    """A full collection walks every object not frozen: the ~130,000 startup leaves took
    0.2–0.3 s and came during the first keys pressed. Once the first list is shown they are
    frozen; when the app closes they are collectable again (nothing outlives it frozen)."""
    gc.unfreeze()
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        frozen = gc.get_freeze_count()
        tracked = len(gc.get_objects())
    assert frozen > tracked  # most of the heap
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("keys", [("question_mark", "question_mark"), ("D",), ("3",), ("1", "tab", "enter")])
async def test_collections_resume_once_the_screen_shows_the_key(make_app: Callable[[], MemtuiApp], keys: tuple[str, ...]) -> None:
    """The collector waits while a key is answered, never longer: after the keys (a pane
    switched, a screen pushed), automatic collections run again."""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        assert gc.isenabled()
    assert gc.isenabled()

"""Every screen and dialog of the app shows its own keys in a footer: a user never has to guess
how to leave one."""

from __future__ import annotations

import inspect

import pytest
from textual.screen import Screen

# every module of memtui.tui that defines a screen (the panes import some lazily)
import memtui.tui.app  # noqa: F401
import memtui.tui.dialogs  # noqa: F401
import memtui.tui.doctor  # noqa: F401
import memtui.tui.inbox  # noqa: F401
import memtui.tui.widgets.import_dialog  # noqa: F401
import memtui.tui.widgets.session_view  # noqa: F401
import memtui.tui.widgets.usage_view  # noqa: F401
from memtui.tui.pane import KeysFooter


def screens() -> list[type[Screen[object]]]:
    """Every screen class memtui defines (modules under ``memtui.tui``)."""
    found: list[type[Screen[object]]] = []
    pending = list(Screen.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("memtui.tui") and "compose" in cls.__dict__:
            found.append(cls)
    return sorted(set(found), key=lambda c: c.__qualname__)


@pytest.mark.parametrize("screen", screens(), ids=lambda c: c.__qualname__)
def test_every_screen_composes_a_footer_of_its_keys(screen: type[Screen[object]]) -> None:
    assert "KeysFooter()" in inspect.getsource(screen.compose), f"{screen.__qualname__} has no footer"


def test_the_screens_are_found() -> None:
    names = {c.__qualname__ for c in screens()}
    assert {"DoctorScreen", "InboxScreen", "SourceDialog", "SessionPicker", "UsesDialog", "ImportDecisionDialog", "PlanPreview"} <= names


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
@pytest.mark.parametrize("pane", ["cascade", "memories", "recall", "dream"])
async def test_no_footer_key_is_cut_or_covered(make_app, pane: str, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    from support.pilot import settle, wait_until
    from textual.widgets._footer import FooterKey

    from memtui.tui.pane import PaneTabs

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.query_one(PaneTabs).show(pane)
        await settle(pilot)
        footer = app.screen.query_one(KeysFooter)

        def laid_out() -> bool:  # the footer recomposes its keys after the focus moves, then lays them out
            shown = [k for k in footer.query(FooterKey) if k.display]
            return bool(shown) and all(k.region.width for k in shown)

        await wait_until(pilot, laid_out, what="the footer's keys laid out")
        keys = [k for k in footer.query(FooterKey) if k.display]
        regions = [k.region for k in keys]
        for key, region in zip(keys, regions):
            text = f"{key.key_display} {key.description}".strip()
            assert footer.region.contains_region(region), f"{text!r} is cut off"
            assert region.width >= len(text), f"{text!r} is squeezed into {region.width} columns"
        for i, a in enumerate(regions):
            for b in regions[i + 1 :]:
                assert not a.overlaps(b), "two footer keys overlap"

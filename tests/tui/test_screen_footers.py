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

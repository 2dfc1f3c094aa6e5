"""memtui's ``OptionList``: paging a list squeezed to no visible line does nothing (Textual's
own raised ``KeyError`` there and ended the app)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual.widgets.option_list import Option

from memtui.tui.widgets.option_list import OptionList


class Squeezed(App[None]):
    """A list under a neighbour that takes every row."""

    CSS = "#tall { height: 1fr; min-height: 40; } OptionList { height: 1fr; }"

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("tall", id="tall")
            yield OptionList(*(Option(f"option {i}", disabled=i == 1) for i in range(3)))

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()


async def test_paging_a_list_with_no_visible_line_does_nothing() -> None:
    app = Squeezed()
    async with app.run_test(size=(40, 20)) as pilot:
        options = app.query_one(OptionList)
        assert options.size.height == 0
        for key in ("pagedown", "pageup", "pagedown", "end", "home", "down", "up"):
            await pilot.press(key)
            await pilot.pause()
        assert app.is_running
        assert options.highlighted == 0  # home: the first option


def test_every_list_of_the_app_is_the_safe_one() -> None:
    import re
    from pathlib import Path

    import memtui.tui

    root = Path(memtui.tui.__file__).parent
    importing = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if p.name != "option_list.py" and re.search(r"from textual\.widgets import (\([^)]*|[^\n(]*)\bOptionList\b", p.read_text(encoding="utf-8"))]
    assert importing == []

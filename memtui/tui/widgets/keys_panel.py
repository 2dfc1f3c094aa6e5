"""The key panel (``?``/F1): the focused pane's own keys first, with what each does.

Textual's key panel lists the focused widget's bindings first, and in a list or a text box
those are a dozen cursor and scroll keys; memtui's own keys (every one has an ``id``) came
after them, below the fold on a 24-line terminal. This panel lists memtui's keys — the
focused screen's or pane's, then the app's — and sums up the generic movement keys in one line.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import KeyPanel, Static

# the keys every list and text box has, in one line instead of a row each
MOVEMENT = "↑ ↓ ← → pgup pgdn home end: move in the focused list or text"


def _group(namespace: object) -> str:
    """The heading a binding's owner gets: the app's keys work everywhere."""
    from textual.app import App

    return "everywhere" if isinstance(namespace, App) else "here"


class PaneBindingsTable(Static):
    """The bindings with an ``id`` (memtui's), grouped: here (focused pane or screen), then
    everywhere; then one line for the generic movement keys. Drawn anew each time the panel
    recomposes (Textual's ``KeyPanel`` does on every change of the active bindings)."""

    COMPONENT_CLASSES = {"bindings-table--key", "bindings-table--description", "bindings-table--header"}
    DEFAULT_CSS = """
    PaneBindingsTable {
        width: 1fr;
        height: auto;
    }
    PaneBindingsTable > .bindings-table--key {
        color: $text-accent;
        text-style: bold;
    }
    PaneBindingsTable > .bindings-table--description {
        color: $foreground;
    }
    PaneBindingsTable > .bindings-table--header {
        color: $text-primary;
        text-style: underline;
    }
    """

    def render(self) -> Table:
        key_style = self.get_component_rich_style("bindings-table--key")
        description_style = self.get_component_rich_style("bindings-table--description")
        header_style = self.get_component_rich_style("bindings-table--header")
        table = Table(padding=(0, 1, 0, 0), show_header=False, box=None, expand=True)
        table.add_column("", justify="right", no_wrap=True)
        table.add_column("", no_wrap=False)
        groups: dict[str, dict[str, list[str]]] = {"here": {}, "everywhere": {}}
        described: dict[str, Text] = {}
        for namespace, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if not binding.id or binding.system or not enabled:
                continue
            rows = groups[_group(namespace)]
            rows.setdefault(binding.action, []).append(self.app.get_key_display(binding))
            if binding.action not in described:
                text = Text(binding.description, style=description_style, end="")
                if binding.tooltip:
                    text.append(" " + binding.tooltip, "dim")
                described[binding.action] = text
        for title, rows in groups.items():
            if not rows:
                continue
            table.add_row("", Text(title, style=header_style, end=""))
            for action, keys in rows.items():
                table.add_row(Text(" ".join(dict.fromkeys(keys)), style=key_style, end=""), described[action])
            table.add_row("", "")
        table.add_row("", Text(MOVEMENT, style="dim", end=""))
        return table


class PaneKeys(KeyPanel):
    """Textual's key panel (its place and live refresh) over ``PaneBindingsTable``."""

    def compose(self) -> ComposeResult:
        yield PaneBindingsTable()


def key_panel(screen: Widget) -> PaneKeys | None:
    """The key panel shown on ``screen``, if any."""
    found = screen.query(PaneKeys)
    return found.first() if found else None

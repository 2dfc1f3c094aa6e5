"""The key panel (``?``/F1): the focused pane's own keys first, with what each does.

Textual's key panel lists the focused widget's bindings first, and in a list or a text box
those are a dozen cursor and scroll keys; memtui's own keys (every one has an ``id``) came
after them, below the fold on a 24-line terminal. This panel lists memtui's keys — the
focused screen's or pane's, then the app's — and sums up the generic movement keys in one line.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

# the keys every list and text box has, in one line instead of a row each
MOVEMENT = "↑ ↓ ← → pgup pgdn home end: move in the focused list or text"


def _group(namespace: object) -> str:
    """The heading a binding's owner gets: the app's keys work everywhere."""
    from textual.app import App

    return "everywhere" if isinstance(namespace, App) else "here"


class KeyRows(Visual):
    """Rows of (keys, description): the keys right-aligned in a column as wide as the widest,
    each description wrapped beside them (its later lines indented under its first).

    ``rows``: (keys, description) pairs; empty keys give a heading or a blank line. A rich
    ``Table`` drew the same; it was rendered twice per draw (once to measure the height) at
    20–40 ms each on a shared 2-core machine, the panel's largest cost when it opened.
    """

    def __init__(self, rows: list[tuple[Content, Content]]) -> None:
        self.rows = rows
        self.key_width = max((keys.cell_length for keys, _ in rows), default=0)
        self._lines: tuple[int, Content] | None = None  # (width, the rows laid out at that width)

    def _layout(self, width: int) -> Content:
        if self._lines is not None and self._lines[0] == width:
            return self._lines[1]
        key_width = min(self.key_width, max(0, width // 2))
        indent = Content(" " * (key_width + 1))
        lines: list[Content] = []
        for keys, description in self.rows:
            wrapped = description.wrap(max(1, width - key_width - 1)) if description else [Content("")]
            lines.append(keys.right(key_width) + " " + wrapped[0])
            lines.extend(indent + line for line in wrapped[1:])
        laid_out = Content("\n").join(lines)
        self._lines = (width, laid_out)
        return laid_out

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.key_width + 1 + max((description.cell_length for _, description in self.rows), default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self._layout(width).split(allow_blank=True))

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self._layout(width).render_strips(width, height, style, options)


class PaneBindingsTable(Static):
    """The bindings with an ``id`` (memtui's), grouped: here (focused pane or screen), then
    everywhere; then one line for the generic movement keys. Read anew at each render (the panel
    refreshes it on every change of the active bindings); styles in ``styles/app.tcss``."""

    COMPONENT_CLASSES = {"bindings-table--key", "bindings-table--description", "bindings-table--header"}

    def render(self) -> KeyRows:
        key_style = self.get_visual_style("bindings-table--key", partial=True)
        description_style = self.get_visual_style("bindings-table--description", partial=True)
        header_style = self.get_visual_style("bindings-table--header", partial=True)
        groups: dict[str, dict[str, list[str]]] = {"here": {}, "everywhere": {}}
        described: dict[str, Content] = {}
        for namespace, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if not binding.id or binding.system or not enabled:
                continue
            rows = groups[_group(namespace)]
            rows.setdefault(binding.action, []).append(self.app.get_key_display(binding))
            if binding.action not in described:
                text = Content.styled(binding.description, description_style)
                if binding.tooltip:
                    text += Content.styled(" " + binding.tooltip, "dim")
                described[binding.action] = text
        table: list[tuple[Content, Content]] = []
        for title, rows in groups.items():
            if not rows:
                continue
            # the heading sits in the description column, left of nothing: it must read alone
            table.append((Content(""), Content.styled(f"keys that work {title}", header_style)))
            for action, keys in rows.items():
                table.append((Content.styled(" ".join(dict.fromkeys(keys)), key_style), described[action]))
            table.append((Content(""), Content("")))
        table.append((Content(""), Content.styled(MOVEMENT, "dim")))
        return KeyRows(table)


class PaneKeys(VerticalScroll, can_focus=False):
    """The key panel: ``PaneBindingsTable`` laid over the right of the screen between the
    header and the footer (the ``keys`` layer; its styles are in ``styles/app.tcss``), drawn
    anew whenever the screen's active bindings change (the focus moved, a pane was switched).

    Textual's ``KeyPanel`` splits the screen: every widget under it gets a new width, so opening
    it re-laid out and re-drew the whole screen (0.2–0.3 s on a shared 2-core machine); its own
    stylesheet was parsed on the first ``?``, and it rebuilt its table on every focus change.
    Over the screen nothing under it moves; its styles are read with the app's at startup.
    """

    DEFAULT_CLASSES = "-textual-system"  # kept when the screen recomposes (as Textual's panel)

    def compose(self) -> ComposeResult:
        yield PaneBindingsTable()

    def on_mount(self) -> None:
        mount_screen = self.screen

        def bindings_changed(screen: Screen[object]) -> None:
            if screen is mount_screen and self.is_attached and screen.app.app_focus:
                for table in self.query_children(PaneBindingsTable):  # none while the panel is being removed
                    table.refresh(layout=True)

        self.set_class(self.app.ansi_color, "-ansi-scrollbar")
        mount_screen.bindings_updated_signal.subscribe(self, bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)


def key_panel(screen: Screen[object]) -> PaneKeys | None:
    """The key panel shown on ``screen``, if any (a child of the screen: no walk of the DOM)."""
    found = screen.query_children(PaneKeys)
    return found.first() if found else None

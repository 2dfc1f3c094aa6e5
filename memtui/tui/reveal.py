"""Bringing a pane into view from anywhere (its palette commands run from any pane)."""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import TabPane


def reveal_pane(widget: Widget) -> None:
    """Make the tab holding ``widget`` the visible one, exactly as the pane keys 1–4 do
    (``MemtuiApp.action_show_pane``: the focus is dropped first — left on the hidden pane it
    would keep that pane's keys and pull the tab back — and the pane shown focuses its main
    widget). Does nothing outside a tab or outside memtui's app."""
    pane = next((a for a in widget.ancestors if isinstance(a, TabPane)), None)
    show = getattr(widget.app, "action_show_pane", None)
    if pane is not None and pane.id and callable(show):
        show(pane.id)

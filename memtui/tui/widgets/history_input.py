"""An ``Input`` with a shell-like history: ↑ / ↓ step through the entries ``remember`` kept."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input

# memtui's choice: how many past queries one session keeps.
HISTORY_SIZE = 50


class HistoryInput(Input):
    """An input that remembers submitted values (newest last) for this session."""

    BINDINGS = [
        Binding("up", "history(-1)", "Previous", show=False, id="history.previous", tooltip="The previous query of this session"),
        Binding("down", "history(1)", "Next", show=False, id="history.next", tooltip="The next query of this session"),
    ]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.history: list[str] = []
        self._position: int | None = None
        self._draft = ""

    def remember(self, value: str) -> None:
        """Add ``value`` as the newest entry (moved to the end if already there)."""
        value = value.strip()
        if not value:
            return
        if value in self.history:
            self.history.remove(value)
        self.history.append(value)
        del self.history[:-HISTORY_SIZE]
        self._position = None

    def action_history(self, step: int) -> None:
        """Show the previous (``-1``) or next (``1``) entry; past the newest, the draft."""
        if not self.history:
            return
        if self._position is None:
            if step > 0:
                return
            self._draft = self.value
            position = len(self.history) - 1
        else:
            position = self._position + step
        position = max(position, 0)
        if position >= len(self.history):
            self._position = None
            self.value = self._draft
        else:
            self._position = position
            self.value = self.history[position]
        self.cursor_position = len(self.value)

"""Opening the TUI, on a real project or on the demo workspace."""

from __future__ import annotations

from memtui.commands.common import CliContext


def open_app(obj: CliContext) -> None:
    """Run the Textual app for the context's project (blocks until the app exits)."""
    from memtui.tui.app import MemtuiApp

    MemtuiApp.from_context(obj).run()

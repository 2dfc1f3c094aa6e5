"""Keeping the app's long-lived objects out of Python's full garbage collections.

A full collection walks every object the collector tracks. Once the app is up that is about
130,000 of them (Textual, rich, the core's modules, the panes' widgets): 0.2–0.3 s on a shared
2-core machine, and startup leaves so many new objects behind that the collector's next full pass
came during the first key a user pressed (the key panel took 0.5–0.7 s, switching to Recall
0.3 s). ``gc.freeze`` moves every object alive now into a permanent generation that collections
skip. Frozen objects are still freed by reference counting when dropped; only reference cycles
among them (a closed dialog's widgets) wait until ``thaw``.
"""

from __future__ import annotations

import gc


def freeze_long_lived(*, collect: bool) -> None:
    """Move every object alive now out of the collector's full collections.

    ``collect``: unfreeze and collect first (a full collection: ~0.1–0.3 s for the app's heap,
    more with a large catalog listed), so nothing that is garbage already stays frozen. Without
    it the call is O(1): the garbage alive now (at the first paint, ~4,000 objects of startup
    scaffolding) stays until ``thaw``.
    """
    if collect:
        gc.unfreeze()
        gc.collect()
    gc.freeze()


def thaw() -> None:
    """Make the frozen objects collectable again (the app is closing: whatever outlives it — a
    test run, a benchmark — must be freed by the collector as usual)."""
    gc.unfreeze()


class KeyPause:
    """Automatic collections held back from a key until the screen shows what it did.

    Textual does the same while it scrolls (``App.PAUSE_GC_ON_SCROLL``). A key's work allocates
    tens of thousands of objects; a full pass over what the app built since the last freeze
    (40 ms here, more on a busy machine) fell inside a key's answer about one key in two. Held
    back, it runs right after the screen is updated. ``resume`` is idempotent, and only undoes a
    pause this object made (collections that someone else stopped stay stopped).
    """

    def __init__(self) -> None:
        self._paused = False

    def pause(self) -> bool:
        """Stop automatic collections; ``False`` if they were not running (nothing to resume)."""
        if self._paused or not gc.isenabled():
            return False
        gc.disable()
        self._paused = True
        return True

    def resume(self) -> None:
        """Start automatic collections again, if ``pause`` stopped them."""
        if self._paused:
            self._paused = False
            gc.enable()

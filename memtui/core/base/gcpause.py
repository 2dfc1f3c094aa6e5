"""Pausing Python's cyclic garbage collector while a scan builds 100,000 records.

Each record is a handful of objects that hold no reference cycles; the collector still walks
every tracked object each time enough of them have been made, again and again while the scan
grows — about a third of a warm ``memtui ls`` over 100,000 memories. Objects made meanwhile
are freed by reference counting as usual; only cycles wait for the next collection.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (restored as it was after it; nests)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

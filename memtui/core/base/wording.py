"""Counts in memtui's own sentences: "1 memory", "2 memories" (never in text the agent itself
words: its warnings and prompts are quoted as it writes them)."""

from __future__ import annotations


def counted(n: float, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun that agrees with it: ``counted(1, "memory", "memories")`` is
    ``"1 memory"``, ``counted(1200, "file")`` is ``"1,200 files"``. An ``int`` gets thousands
    separators, a ``float`` the shortest form (``2.5``); the singular for exactly 1 (or -1),
    else ``plural`` (default: ``singular`` + ``"s"``)."""
    number = f"{n:,}" if isinstance(n, int) else f"{n:g}"
    word = singular if abs(n) == 1 else (plural if plural is not None else f"{singular}s")
    return f"{number} {word}"

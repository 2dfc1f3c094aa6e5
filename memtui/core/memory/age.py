"""Age and freshness of a memory (docs/behaviour.md §5), with an injected clock.

``days = floor((now - mtime) / 86,400 s)``, never negative. Labels ``today``, ``yesterday``,
``N days ago``. Past one day a memory carries the reference's staleness caveat.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

SECONDS_PER_DAY = 86_400
AgeBand = Literal["fresh", "recent", "aging", "stale", "old"]


def age_days(mtime: float, now: datetime) -> int:
    """Whole days between ``mtime`` (epoch seconds) and ``now`` (aware datetime); ``>= 0``."""
    return age_days_at(mtime, now.timestamp())


def age_days_at(mtime: float, now_ts: float) -> int:
    """``age_days`` with ``now`` as epoch seconds (for a loop over many memories)."""
    return max(0, math.floor((now_ts - mtime) / SECONDS_PER_DAY))


def age_label(days: int) -> str:
    """``today`` / ``yesterday`` / ``N days ago`` — the reference's wording."""
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def stale_caveat(days: int) -> str | None:
    """The reference's freshness text for memories older than one day, else ``None``."""
    if days <= 1:
        return None
    return (
        f"This memory is {days} days old. Memories are point-in-time observations, not live state"
        " — claims about code behavior or file:line citations may be outdated."
        " Verify against current code before asserting as fact."
    )


def age_band(days: int) -> AgeBand:
    """memtui's colour band for age badges: fresh (0–1 d), recent (≤ 7), aging (≤ 30),
    stale (≤ 90), old (> 90). The bands are memtui's choice, not the reference's."""
    if days <= 1:
        return "fresh"
    if days <= 7:
        return "recent"
    if days <= 30:
        return "aging"
    if days <= 90:
        return "stale"
    return "old"

"""The injected clock.

Every age computation takes ``now`` explicitly. ``system_now()`` is the one place that reads
the wall clock; it honours ``MEMTUI_NOW`` (ISO-8601, e.g. ``2026-03-02T12:00:00Z``) so that
screenshots and reproducible runs can freeze time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime


# The epoch seconds a ``datetime`` can hold, 0001-01-01T00:00:00Z … 9999-12-31T23:59:59Z: a time
# read from a file is checked against these before anything converts it.
EPOCH_MIN = -62_135_596_800
EPOCH_MAX = 253_402_300_799


class ClockError(ValueError):
    """``MEMTUI_NOW`` is set but is not an ISO-8601 timestamp."""


def parse_iso(value: str) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` accepted); a naive value is taken as UTC.

    Raises ``ClockError`` when ``value`` is not ISO-8601.
    """
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise ClockError(f"not a usable ISO-8601 timestamp: {value!r}") from exc


def system_now(environ: Mapping[str, str] | None = None) -> datetime:
    """The current time (UTC, aware), or ``MEMTUI_NOW`` when set.

    Raises ``ClockError`` when ``MEMTUI_NOW`` is set to something that is not ISO-8601.
    """
    env = os.environ if environ is None else environ
    frozen = env.get("MEMTUI_NOW")
    if frozen:
        return parse_iso(frozen)
    return datetime.now(UTC)


def system_now_or_wall(environ: Mapping[str, str] | None = None) -> tuple[datetime, ClockError | None]:
    """For code that must never fail (an agent's hook): ``system_now()`` and ``None``, or, when
    ``MEMTUI_NOW`` is set but unusable, the wall clock (UTC) and the error to report."""
    try:
        return system_now(environ), None
    except ClockError as exc:
        return datetime.now(UTC), exc

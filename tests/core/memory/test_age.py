"""docs/behaviour.md §5: `days = floor((now - mtime) / 86,400 s)`, never negative; labels `today`,
`yesterday`, `N days ago`; past one day the caveat "This memory is N days old" + a reminder
that it is a point-in-time note to verify. The clock is injected; `MEMTUI_NOW` (ISO-8601)
freezes it."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memtui.core.memory.age import age_days, age_label, stale_caveat
from memtui.core.memory.catalog import load_catalog
from memtui.core.base.clock import ClockError, parse_iso, system_now

NOW = datetime(2026, 3, 10, 12, 0, 0, tzinfo=UTC)
DAY = 86_400


@pytest.mark.parametrize(
    ("seconds_ago", "days"),
    [(0, 0), (1, 0), (DAY - 1, 0), (DAY, 1), (2 * DAY - 1, 1), (2 * DAY, 2), (47 * DAY + 0.5 * DAY, 47), (200 * DAY, 200)],
)
def test_age_is_floor_of_whole_days(seconds_ago: float, days: int) -> None:
    assert age_days(NOW.timestamp() - seconds_ago, NOW) == days


@pytest.mark.parametrize("seconds_ahead", [1, DAY, 30 * DAY])
def test_age_is_never_negative(seconds_ahead: int) -> None:
    assert age_days(NOW.timestamp() + seconds_ahead, NOW) == 0


def test_age_is_about_elapsed_time_not_calendar_days() -> None:
    # 23:59 yesterday → 1 minute ago → today (not "yesterday")
    now = datetime(2026, 3, 10, 0, 0, 30, tzinfo=UTC)
    assert age_days(datetime(2026, 3, 9, 23, 59, 30, tzinfo=UTC).timestamp(), now) == 0


def test_now_in_another_timezone_is_the_same_instant() -> None:
    plus2 = NOW.astimezone(timezone(timedelta(hours=2)))
    mtime = NOW.timestamp() - 3 * DAY
    assert age_days(mtime, plus2) == age_days(mtime, NOW) == 3


@pytest.mark.parametrize(("days", "label"), [(0, "today"), (1, "yesterday"), (2, "2 days ago"), (47, "47 days ago")])
def test_labels(days: int, label: str) -> None:
    assert age_label(days) == label


@pytest.mark.parametrize("days", [0, 1])
def test_no_caveat_for_today_and_yesterday(days: int) -> None:
    assert stale_caveat(days) is None


@pytest.mark.parametrize("days", [2, 47, 365])
def test_caveat_past_one_day(days: int) -> None:
    caveat = stale_caveat(days)
    assert caveat is not None
    assert caveat.startswith(f"This memory is {days} days old.")
    assert "point-in-time" in caveat
    assert "Verify" in caveat or "verify" in caveat


# --- the clock ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-02T12:00:00Z", datetime(2026, 3, 2, 12, tzinfo=UTC)),
        ("2026-03-02T12:00:00+00:00", datetime(2026, 3, 2, 12, tzinfo=UTC)),
        ("2026-03-02T14:00:00+02:00", datetime(2026, 3, 2, 12, tzinfo=UTC)),
        ("2026-03-02T12:00:00", datetime(2026, 3, 2, 12, tzinfo=UTC)),  # naive → UTC
        ("2026-03-02T12:00:00.250Z", datetime(2026, 3, 2, 12, 0, 0, 250_000, tzinfo=UTC)),
        ("2026-03-02", datetime(2026, 3, 2, tzinfo=UTC)),
    ],
)
def test_memtui_now_parsing(monkeypatch: pytest.MonkeyPatch, value: str, expected: datetime) -> None:
    monkeypatch.setenv("MEMTUI_NOW", value)
    now = system_now()
    assert now == expected
    assert now.utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01T00:00:00Z", "12:00", "not a date"])
def test_memtui_now_invalid_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("MEMTUI_NOW", value)
    with pytest.raises(ClockError):
        system_now()
    with pytest.raises(ValueError):  # ClockError is a ValueError
        parse_iso(value)


def test_without_memtui_now_the_clock_is_the_wall_clock() -> None:
    before = datetime.now(UTC)
    now = system_now()
    after = datetime.now(UTC)
    assert before <= now <= after
    assert now.tzinfo is not None


def test_system_now_accepts_an_injected_environment() -> None:
    assert system_now({"MEMTUI_NOW": "2026-01-01T00:00:00Z"}) == datetime(2026, 1, 1, tzinfo=UTC)


def test_catalog_ages_use_the_injected_clock(tmp_path: Path) -> None:
    text = "---\nname: n\ndescription: d\ntype: user\n---\nbody\n"
    ages = {"today.md": 3600, "yesterday.md": DAY + 60, "old.md": 47 * DAY + 60, "future.md": -5 * DAY}
    for name, ago in ages.items():
        (tmp_path / name).write_text(text)
        t = NOW.timestamp() - ago
        os.utime(tmp_path / name, (t, t))
    catalog = load_catalog(tmp_path, NOW)
    got = {e.relpath: (e.age_days, e.age_label, e.stale_caveat is not None) for e in catalog.entries}
    assert got == {
        "today.md": (0, "today", False),
        "yesterday.md": (1, "yesterday", False),
        "old.md": (47, "47 days ago", True),
        "future.md": (0, "today", False),
    }
    assert catalog.now == NOW

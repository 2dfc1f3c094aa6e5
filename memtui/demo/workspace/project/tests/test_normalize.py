from __future__ import annotations

from datetime import UTC, datetime

import pytest

from acme_ingest.pipeline import parse_ts


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-03-01T10:00:00Z", datetime(2026, 3, 1, 10, tzinfo=UTC)),
        ("2026-03-01T10:00:00+00:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
        ("2026-03-01T10:00:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
        ("1772359200000", datetime(2026, 3, 1, 10, tzinfo=UTC)),
    ],
    ids=["z-suffix", "offset", "naive", "epoch-ms"],
)
def test_parse_ts_is_always_aware(raw: str, expected: datetime) -> None:
    assert parse_ts(raw) == expected

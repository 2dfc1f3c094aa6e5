"""Normalise partner payloads into our event shape."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True, slots=True)
class Event:
    source: str
    external_id: str
    occurred_at: datetime
    amount_minor: int
    currency: str


def parse_ts(value: str) -> datetime:
    """Parse a partner timestamp; a value without an offset is taken as UTC.

    Parcelly v2 sends epoch milliseconds (``"1772359200000"``) instead of ISO-8601.
    """
    if value.isdigit():
        return datetime.fromtimestamp(int(value) / 1000, tz=UTC)
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def normalize_event(raw: dict[str, object]) -> Event:
    return Event(
        source=str(raw["source"]),
        external_id=str(raw["id"]),
        occurred_at=parse_ts(str(raw["ts"])),
        amount_minor=int(str(raw["amount_minor"])),
        currency=str(raw.get("currency", "EUR")),
    )

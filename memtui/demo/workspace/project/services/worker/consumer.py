"""Kafka consumer: reads partner topics and hands each message to the pipeline."""

from __future__ import annotations

import structlog

from acme_ingest.pipeline import normalize_event
from acme_ingest.store import write_batch

log = structlog.get_logger()

MAX_BATCH = 500


def handle(messages: list[dict[str, object]]) -> int:
    events = [normalize_event(m) for m in messages]
    written = write_batch(events[:MAX_BATCH])
    log.info("batch_written", rows=written, dropped=len(events) - written)
    return written

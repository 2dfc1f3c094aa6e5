"""All configuration, read once from the environment."""

from __future__ import annotations

import os

DATABASE_URL = os.environ.get("ACME_DATABASE_URL", "postgresql://localhost:5432/ingest")
KAFKA_BROKERS = os.environ.get("ACME_KAFKA_BROKERS", "localhost:9092")
HTTP_TIMEOUT_S = float(os.environ.get("ACME_HTTP_TIMEOUT_S", "10"))

"""All configuration, read once from the environment."""

from __future__ import annotations

import os

DATABASE_URL = os.environ.get("ACME_DATABASE_URL", "postgresql://localhost:5432/ingest")
KAFKA_BROKERS = os.environ.get("ACME_KAFKA_BROKERS", "localhost:9092")
HTTP_TIMEOUT_S = float(os.environ.get("ACME_HTTP_TIMEOUT_S", "10"))
# Feature flags (the Parcelly v2 client ships behind this one).
PARCELLY_V2_ENABLED = os.environ.get("ACME_PARCELLY_V2_ENABLED", "0") == "1"
FLAGS = {"parcelly_v2_enabled": PARCELLY_V2_ENABLED}

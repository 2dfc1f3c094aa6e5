-- Ingest v3: per-partner quotas (messages per minute), read by the worker at startup.
CREATE TABLE ingest.partner_quotas (
    partner text PRIMARY KEY,
    per_minute integer NOT NULL CHECK (per_minute > 0)
);

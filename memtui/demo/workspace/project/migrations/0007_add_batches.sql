CREATE TABLE ingest.batches (
    id          bigserial PRIMARY KEY,
    source      text        NOT NULL,
    rows        integer     NOT NULL CHECK (rows >= 0),
    written_at  timestamptz NOT NULL DEFAULT now()
);

-- down:
-- DROP TABLE ingest.batches;

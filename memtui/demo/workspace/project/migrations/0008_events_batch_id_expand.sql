-- expand: nullable column and a foreign key that is not validated yet (no long lock)
ALTER TABLE ingest.events ADD COLUMN batch_id bigint;
ALTER TABLE ingest.events
    ADD CONSTRAINT events_batch_id_fkey FOREIGN KEY (batch_id)
    REFERENCES ingest.batches (id) NOT VALID;

-- down:
-- ALTER TABLE ingest.events DROP CONSTRAINT events_batch_id_fkey;
-- ALTER TABLE ingest.events DROP COLUMN batch_id;

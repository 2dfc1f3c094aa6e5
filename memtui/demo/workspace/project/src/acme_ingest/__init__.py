"""acme-ingest: partner event ingestion."""

__version__ = "0.9.3"

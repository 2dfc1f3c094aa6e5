"""Third-party code copied in by `just vendor`; never edit it here."""

"""One module per partner source; wrappers around vendored clients live here."""

"""The memory store as the agent reads it: frontmatter (YAML 1.2), memory files and their types,
the ``MEMORY.md`` index, ages, lint, secret scanning, the header scan, the catalog database
(SQLite: parsed records, derived data, search index), search, and the digest of a whole dir
that results kept for it are keyed by.

May use: ``base``, ``places``. Never writes a memory file.
"""

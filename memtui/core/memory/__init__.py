"""The memory store as the agent reads it: frontmatter (YAML 1.2), memory files and their types,
the ``MEMORY.md`` index, ages, lint, secret scanning, the header scan and the scan cache.

May use: ``base``, ``places``. Never writes a memory file.
"""

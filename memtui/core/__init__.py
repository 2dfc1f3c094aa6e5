"""The memory system of a coding agent, computed exactly (docs/behaviour.md §1–§10).

Nothing in this package imports ``textual`` or ``rich`` or prints; a test enforces it.
"""

"""memtui — see and tend the memory of a coding agent.

``memtui.core`` is the memory system itself (no UI imports); ``memtui.cli`` and
``memtui.tui`` are thin layers over it.
"""

__version__ = "0.1.0"

"""Where things are for one project: flavors, settings, the git root, slugs, the auto-memory
dir, the sessions dir and memtui's own state dir.

May use: ``base``.
"""

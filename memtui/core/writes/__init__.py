"""The one write path: atomic writes, byte-preserving frontmatter rewrites, index edits that go
with a memory edit, the journal of before-images (undo, trash) and path safety.

May use: ``base``, ``places``, ``memory``.
"""

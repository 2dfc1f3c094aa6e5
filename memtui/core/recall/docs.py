"""One memory as every recall selector sees it."""

from __future__ import annotations

from dataclasses import dataclass

from memtui.core.memory.headers import MemoryHeader


@dataclass(frozen=True, slots=True)
class RecallDoc:
    """One memory as recall sees it: the reference's ``header`` plus memtui's extras for the
    lexical selector (``name`` or ``None``; ``body_head``: at most ``BODY_HEAD_CHARS``
    characters of body found in the first 30 lines) and ``key``: the file's ``(st_mtime_ns,
    st_size, st_ino, st_ctime_ns)`` when those bytes were read (``None`` when not known), the key
    of what is cached about the memory (its embedding)."""

    header: MemoryHeader
    name: str | None
    body_head: str
    key: tuple[int, int, int, int] | None = None

    @property
    def relpath(self) -> str:
        """POSIX path relative to the memory dir (the name the manifest and the model use)."""
        return self.header.relpath

"""The edit journal: before-images of every file memtui rewrites, so any change can be undone.

Layout (in memtui's state dir, never inside the memory dir — the agent's recall would read
backups there): ``<state>/memdirs/<slug of the memory dir>/journal/<id>/`` holding
``entry.json`` and ``before/<relpath>`` copies. A deleted memory's before-image *is* the trash.
The newest ``KEEP_ENTRIES`` entries are kept (memtui's choice: enough for a long session).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.atomic import atomic_write_bytes
from memtui.core.slug import slugify

KEEP_ENTRIES = 200
EntryStatus = Literal["pending", "applied", "failed", "undone"]


@dataclass(slots=True)
class JournalChange:
    """One file of an entry: ``relpath`` (POSIX, to the memory dir), ``kind``
    (``create``/``modify``/``delete``), SHA-256 hex of the bytes before/after (``None`` when
    absent), and the file's mtime before (epoch s, so undo restores it too)."""

    relpath: str
    kind: str
    before_sha: str | None
    after_sha: str | None
    before_mtime: float | None = None  # epoch seconds, restored by undo


@dataclass(slots=True)
class JournalEntry:
    """One applied (or attempted) change set."""

    id: str
    title: str
    time: str
    status: EntryStatus
    changes: list[JournalChange] = field(default_factory=list)
    action: str = "edit"
    undoes: str | None = None
    restores: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``entry.json`` shape."""
        return asdict(self)


class Journal:
    """The journal of one memory dir."""

    def __init__(self, state_dir: Path, memory_dir: Path) -> None:
        self.root = state_dir / "memdirs" / slugify(str(memory_dir.resolve())) / "journal"

    def _dir(self, entry_id: str) -> Path:
        return self.root / entry_id

    def new_entry(
        self, title: str, now: datetime, changes: list[JournalChange], before: dict[str, bytes], *, action: str = "edit"
    ) -> JournalEntry:
        """Write a ``pending`` entry with the before-images, durably, before anything is touched."""
        self.root.mkdir(parents=True, exist_ok=True)
        stamp = now.strftime("%Y%m%dT%H%M%S")
        n = len(list(self.root.iterdir())) + 1
        entry_id = f"{stamp}-{n:04d}"
        while self._dir(entry_id).exists():
            n += 1
            entry_id = f"{stamp}-{n:04d}"
        entry = JournalEntry(entry_id, title, now.isoformat(), "pending", changes, action)
        for relpath, data in before.items():
            atomic_write_bytes(self._dir(entry_id) / "before" / relpath, data)
        self.save(entry)
        return entry

    def save(self, entry: JournalEntry) -> None:
        """Persist ``entry.json``."""
        data = json.dumps(entry.to_json(), ensure_ascii=False, indent=1).encode("utf-8")
        atomic_write_bytes(self._dir(entry.id) / "entry.json", data)

    def before_image(self, entry_id: str, relpath: str) -> bytes | None:
        """The bytes ``relpath`` had before entry ``entry_id``, or ``None`` (it did not exist)."""
        path = self._dir(entry_id) / "before" / relpath
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None

    def entries(self) -> list[JournalEntry]:
        """All entries, oldest first. Unreadable entries are skipped."""
        if not self.root.is_dir():
            return []
        out: list[JournalEntry] = []
        for child in sorted(self.root.iterdir()):
            try:
                raw = json.loads((child / "entry.json").read_text(encoding="utf-8"))
                raw["changes"] = [JournalChange(**c) for c in raw.get("changes", [])]
                out.append(JournalEntry(**raw))
            except (OSError, ValueError, TypeError):
                continue
        return out

    def prune(self) -> None:
        """Drop all but the newest ``KEEP_ENTRIES`` entries."""
        entries = sorted(p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []
        for old in entries[: max(0, len(entries) - KEEP_ENTRIES)]:
            shutil.rmtree(old, ignore_errors=True)


def sha256_hex(data: bytes | None) -> str | None:
    """SHA-256 of ``data`` as hex, or ``None``."""
    if data is None:
        return None
    import hashlib

    return hashlib.sha256(data).hexdigest()


def read_or_none(path: Path) -> bytes | None:
    """The bytes of ``path``, or ``None`` when it does not exist. Other errors raise ``OSError``."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise
    except OSError:
        if not os.path.lexists(path):
            return None
        raise

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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.base.safe_read import read_regular
from memtui.core.places.statedir import memdir_state

KEEP_ENTRIES = 200
# The largest file memtui copies into or out of the journal (a memory file is a few KB).
MAX_IMAGE_BYTES = 64 * 1024 * 1024
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
        self.root = memdir_state(state_dir, memory_dir) / "journal"

    def _dir(self, entry_id: str) -> Path:
        return self.root / entry_id

    def new_entry(
        self, title: str, now: datetime, changes: list[JournalChange], before: dict[str, bytes], *, action: str = "edit"
    ) -> JournalEntry:
        """Write a ``pending`` entry with the before-images, durably, before anything is touched."""
        self.root.mkdir(parents=True, exist_ok=True)
        stamp = now.strftime("%Y%m%dT%H%M%S")
        seq = self._last_seq() + 1
        entry_id = f"{seq:07d}-{stamp}"
        while True:  # the write lock serialises memtui processes; mkdir settles any other race
            try:
                self._dir(entry_id).mkdir()
                break
            except FileExistsError:
                seq += 1
                entry_id = f"{seq:07d}-{stamp}"
        entry = JournalEntry(entry_id, title, now.isoformat(), "pending", changes, action)
        for relpath, data in before.items():
            atomic_write_bytes(self._dir(entry_id) / "before" / relpath, data)
        self.save(entry)
        return entry

    def _last_seq(self) -> int:
        last = 0
        for child in self.root.iterdir() if self.root.is_dir() else ():
            head = child.name.split("-", 1)[0]
            if head.isdigit():
                last = max(last, int(head))
        return last

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the memory dir's write lock (an ``flock`` in the state dir): memtui processes
        — the app, the CLI, the Stop hook — apply one change at a time, so the check that a
        file is as loaded and the write that follows cannot interleave with another memtui's."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root.parent / "write.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX)
            except ImportError:  # pragma: no cover - Windows: no flock; mkdir still keeps ids unique
                pass
            yield
        finally:
            os.close(fd)

    def save(self, entry: JournalEntry) -> None:
        """Persist ``entry.json``."""
        data = json.dumps(entry.to_json(), ensure_ascii=False, indent=1).encode("utf-8")
        atomic_write_bytes(self._dir(entry.id) / "entry.json", data)

    def before_image(self, entry_id: str, relpath: str) -> bytes | None:
        """The bytes ``relpath`` had before entry ``entry_id``, or ``None`` (no copy was kept:
        the file did not exist — callers check ``before_sha`` to tell a lost copy)."""
        path = self._dir(entry_id) / "before" / relpath
        try:
            return read_regular(path, MAX_IMAGE_BYTES)[0]
        except FileNotFoundError:
            return None

    def entries(self) -> list[JournalEntry]:
        """All readable entries, oldest first. An entry that is not valid JSON of the expected
        shape, or names a path outside the memory dir, is skipped (see ``damaged``)."""
        return self._scan()[0]

    def damaged(self) -> list[str]:
        """Ids of entries that could not be read (tampered with, or written by a crash)."""
        return self._scan()[1]

    def _scan(self) -> tuple[list[JournalEntry], list[str]]:
        if not self.root.is_dir():
            return [], []
        out: list[JournalEntry] = []
        bad: list[str] = []
        for child in sorted(self.root.iterdir(), key=lambda p: p.name):
            if not child.is_dir():
                continue
            try:
                raw = json.loads(read_regular(child / "entry.json", MAX_IMAGE_BYTES)[0].decode("utf-8"))
                if not isinstance(raw, dict) or not isinstance(raw.get("changes", []), list):
                    raise ValueError("not an entry")
                raw["changes"] = [JournalChange(**c) for c in raw.get("changes", [])]
                entry = JournalEntry(**raw)
                if entry.id != child.name or not all(_safe_relpath(c.relpath) for c in entry.changes):
                    raise ValueError("inconsistent entry")
                out.append(entry)
            except (OSError, ValueError, TypeError, AttributeError, RecursionError):
                bad.append(child.name)
        return out, bad

    def prune(self) -> None:
        """Drop all but the newest ``KEEP_ENTRIES`` entries — except deletions still in the
        trash (their before-image is the only copy of the memory: it is never dropped)."""
        entries, _ = self._scan()
        applied = [e for e in entries if e.status == "applied"]
        back = {e.undoes for e in applied if e.undoes} | {e.restores for e in applied if e.restores}
        in_trash = {e.id for e in applied if e.id not in back and any(c.kind == "delete" for c in e.changes)}
        names = sorted(p.name for p in self.root.iterdir() if p.is_dir())
        for old in names[: max(0, len(names) - KEEP_ENTRIES)]:
            if old not in in_trash:
                shutil.rmtree(self.root / old, ignore_errors=True)


def sha256_hex(data: bytes | None) -> str | None:
    """SHA-256 of ``data`` as hex, or ``None``."""
    if data is None:
        return None
    import hashlib

    return hashlib.sha256(data).hexdigest()


def read_or_none(path: Path) -> bytes | None:
    """The bytes of the regular file ``path``, or ``None`` when nothing is there. A FIFO, a
    device or a file over ``MAX_IMAGE_BYTES`` raises ``OSError`` (never a hang)."""
    if not os.path.lexists(path):
        return None
    try:
        return read_regular(path, MAX_IMAGE_BYTES)[0]
    except FileNotFoundError:
        return None


def _safe_relpath(relpath: object) -> bool:
    """A journal path must stay inside the memory dir: relative, no ``..``, no NUL."""
    if not isinstance(relpath, str) or not relpath or "\0" in relpath or "\\" in relpath:
        return False
    return not relpath.startswith("/") and ".." not in relpath.split("/")

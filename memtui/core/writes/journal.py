"""The edit journal: the intent and the before-images of every change memtui makes, so that any
change can be undone and a change cut short by a crash can be rolled back.

Layout (in memtui's state dir, never inside the memory dir — the agent's recall would read
backups there), under ``<state>/memdirs/<key of the memory dir>/``:

- ``journal/<id>/entry.json`` — the entry (see :class:`JournalEntry`);
- ``journal/<id>/before/<relpath>`` — each changed file's bytes before the change (a deleted
  memory's before-image *is* the trash);
- ``journal/<id>/kept/<n>-<k>`` — versions written by someone else that the change displaced
  and did not put back (see :mod:`memtui.core.writes.transaction`): nothing is ever lost;
- ``journal-open/<id>`` — an empty marker that exists while entry ``<id>`` may have touched a
  memory file without being settled: any memtui start that finds one recovers it;
- ``journal-format`` — ``2`` once the entries written by older memtui versions were looked at
  for unsettled changes.

Entry format: version 1 (memtui before 0.2) and 2 read alike. Version 2 adds ``format``,
``meta`` (what the caller records with the change, e.g. the inbox proposal it accepts),
``dirs`` (directories the change creates, removed again by a rollback) and ``note`` (what a
recovery did). A pending version-1 entry is rolled back from its before-images like a
version-2 one.

The newest ``KEEP_ENTRIES`` entries are kept (memtui's choice: enough for a long session).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.clock import EPOCH_MAX, EPOCH_MIN
from memtui.core.base.jsontext import dumps_exact, json_number, loads_checked
from memtui.core.base.safe_read import read_regular
from memtui.core.places.statedir import memdir_state
from memtui.core.writes import steps
from memtui.core.writes.atomic import atomic_write_bytes

KEEP_ENTRIES = 200
# The largest file memtui copies into or out of the journal (a memory file is a few KB).
MAX_IMAGE_BYTES = 64 * 1024 * 1024
FORMAT = 2
EntryStatus = Literal["pending", "applied", "failed", "undone"]


@dataclass(slots=True)
class JournalChange:
    """One file of an entry: ``relpath`` (POSIX, to the memory dir), ``kind``
    (``create``/``modify``/``delete``), SHA-256 hex of the bytes before/after (``None`` when
    absent), and the file's mtime before (epoch s, so undo restores it too; and in ns, so a
    rollback restores it exactly — absent in entries of memtui before 0.2)."""

    relpath: str
    kind: str
    before_sha: str | None
    after_sha: str | None
    before_mtime: float | None = None  # epoch seconds, restored by undo
    before_mtime_ns: int | None = None  # epoch nanoseconds, restored by a rollback


@dataclass(slots=True)
class JournalEntry:
    """One applied (or attempted) change set. ``status``: ``pending`` (being applied, or cut
    short until a recovery settles it), ``applied``, ``failed`` (rolled back: nothing of it
    remains). ``changes`` are in the order they are written."""

    id: str
    title: str
    time: str
    status: EntryStatus
    changes: list[JournalChange] = field(default_factory=list)
    action: str = "edit"
    undoes: str | None = None
    restores: str | None = None
    format: int = 1
    meta: dict[str, Any] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``entry.json`` shape."""
        return asdict(self)


class Journal:
    """The journal of one memory dir."""

    def __init__(self, state_dir: Path, memory_dir: Path) -> None:
        self.base = memdir_state(state_dir, memory_dir)
        self.root = self.base / "journal"
        self.open_dir = self.base / "journal-open"
        self.format_file = self.base / "journal-format"

    def _dir(self, entry_id: str) -> Path:
        return self.root / entry_id

    def entry_dir(self, entry_id: str) -> Path:
        """``journal/<entry_id>``."""
        return self._dir(entry_id)

    def begin(
        self,
        title: str,
        now: datetime,
        changes: list[JournalChange],
        before: dict[str, bytes],
        *,
        action: str = "edit",
        undoes: str | None = None,
        restores: str | None = None,
        meta: dict[str, Any] | None = None,
        dirs: list[str] | None = None,
    ) -> JournalEntry:
        """Record the intent of a change, durably, before any memory file is touched: the
        ``journal-open`` marker, then the before-images, then ``entry.json`` as ``pending``
        (each fsynced, and its directory). Call under ``write_lock``. Raises ``OSError``."""
        fresh = not self.root.exists()
        steps.make_dirs(self.root)
        steps.make_dirs(self.open_dir)
        if fresh:  # a new journal holds no entry of an older memtui: nothing to look at at start-up
            atomic_write_bytes(self.format_file, f"{FORMAT}\n".encode())
        stamp = now.strftime("%Y%m%dT%H%M%S")
        seq = self._last_seq() + 1
        while True:  # the write lock serialises memtui processes; O_EXCL and mkdir settle the rest
            entry_id = f"{seq:07d}-{stamp}"
            if not os.path.lexists(self._dir(entry_id)):
                try:
                    steps.create_file(self.open_dir / entry_id, b"", mode=0o600)
                except FileExistsError:
                    seq += 1
                    continue
                steps.fsync_dir(self.open_dir)
                try:
                    steps.mkdir(self._dir(entry_id))
                    break
                except FileExistsError:
                    steps.unlink(self.open_dir / entry_id)
            seq += 1
        entry = JournalEntry(
            entry_id, title, now.isoformat(), "pending", changes, action, undoes, restores, FORMAT, dict(meta or {}), list(dirs or [])
        )
        for relpath, data in before.items():
            atomic_write_bytes(self._dir(entry_id) / "before" / relpath, data)
        self.save(entry)
        return entry

    def settle(self, entry: JournalEntry) -> None:
        """Persist ``entry`` (its final status) and drop its ``journal-open`` marker."""
        self.save(entry)
        steps.unlink(self.open_dir / entry.id)
        steps.fsync_dir(self.open_dir)

    def open_ids(self) -> list[str]:
        """Ids with a ``journal-open`` marker (changes that may be unsettled), oldest first."""
        try:
            return sorted(name for name in os.listdir(self.open_dir) if not name.startswith("."))
        except OSError:
            return []

    def _last_seq(self) -> int:
        last = 0
        for child in self.root.iterdir() if self.root.is_dir() else ():
            head = child.name.split("-", 1)[0]
            if head.isdigit():
                last = max(last, int(head))
        for name in self.open_ids():
            head = name.split("-", 1)[0]
            if head.isdigit():
                last = max(last, int(head))
        return last

    @contextmanager
    def write_lock(self, *, wait: bool = True) -> Iterator[None]:
        """Hold the memory dir's write lock (an ``flock`` in the state dir): memtui processes
        — the app, the CLI, the Stop hook — apply one change at a time, so the check that a
        file is as loaded and the write that follows cannot interleave with another memtui's.
        ``wait=False`` raises ``BlockingIOError`` at once when another process holds it (the
        lock dies with its holder, so a held lock means a live writer)."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root.parent / "write.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            try:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:  # pragma: no cover - Windows: no flock; mkdir still keeps ids unique
                pass
            yield
        finally:
            os.close(fd)

    def save(self, entry: JournalEntry) -> None:
        """Persist ``entry.json`` (atomically, fsynced)."""
        data = dumps_exact(entry.to_json(), indent=1).encode("utf-8")
        atomic_write_bytes(self._dir(entry.id) / "entry.json", data)

    def load(self, entry_id: str) -> JournalEntry:
        """Entry ``entry_id`` as on disk. Raises ``OSError`` (absent, unreadable) or
        ``ValueError`` (not an entry: not UTF-8 JSON, nested too deep, a field of the wrong type
        or out of range — see ``_check_entry`` — or naming a path outside the memory dir)."""
        child = self._dir(entry_id)
        try:
            raw = loads_checked(read_regular(child / "entry.json", MAX_IMAGE_BYTES)[0])
            if not isinstance(raw, dict) or not isinstance(raw.get("changes", []), list):
                raise ValueError("not an entry")
            raw["changes"] = [JournalChange(**c) for c in raw.get("changes", [])]
            entry = JournalEntry(**raw)
        except (TypeError, AttributeError) as exc:  # a change that is not an object; an unknown field
            raise ValueError(f"not an entry: {exc}") from exc
        if entry.id != child.name or not all(_safe_relpath(c.relpath) for c in entry.changes):
            raise ValueError("inconsistent entry")
        if not isinstance(entry.meta, dict) or not isinstance(entry.dirs, list) or not all(_safe_relpath(d) for d in entry.dirs):
            raise ValueError("inconsistent entry")
        _check_entry(entry)
        return entry

    def before_image(self, entry_id: str, relpath: str) -> bytes | None:
        """The bytes ``relpath`` had before entry ``entry_id``, or ``None`` (no copy was kept:
        the file did not exist — callers check ``before_sha`` to tell a lost copy)."""
        path = self._dir(entry_id) / "before" / relpath
        try:
            return read_regular(path, MAX_IMAGE_BYTES)[0]
        except FileNotFoundError:
            return None

    def keep(self, entry_id: str, index: int, data: bytes, mtime_ns: int | None) -> Path:
        """Store a version of change ``index``'s file that someone else wrote and the change
        displaced: ``kept/<index>-<n>`` (durably, with its mtime, epoch ns). Returns its path."""
        folder = self._dir(entry_id) / "kept"
        n = 1
        while os.path.lexists(folder / f"{index}-{n}"):
            n += 1
        path = folder / f"{index}-{n}"
        atomic_write_bytes(path, data, mode=0o600, mtime_ns=mtime_ns)
        return path

    def kept(self, entry_id: str, index: int) -> list[Path]:
        """The versions kept for change ``index`` of ``entry_id``, oldest first."""
        folder = self._dir(entry_id) / "kept"
        try:
            names = [n for n in os.listdir(folder) if n.split("-", 1)[0] == str(index) and n.split("-", 1)[-1].isdigit()]
        except OSError:
            return []
        return [folder / n for n in sorted(names, key=lambda n: int(n.split("-", 1)[1]))]

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
                out.append(self.load(child.name))
            except (OSError, ValueError):
                bad.append(child.name)
        return out, bad

    def prune(self) -> None:
        """Drop all but the newest ``KEEP_ENTRIES`` entries — except deletions still in the
        trash (their before-image is the only copy of the memory: it is never dropped) and
        entries not settled yet."""
        entries, _ = self._scan()
        applied = [e for e in entries if e.status == "applied"]
        back = {e.undoes for e in applied if e.undoes} | {e.restores for e in applied if e.restores}
        in_trash = {e.id for e in applied if e.id not in back and any(c.kind == "delete" for c in e.changes)}
        keep = in_trash | set(self.open_ids())
        names = sorted(p.name for p in self.root.iterdir() if p.is_dir())
        for old in names[: max(0, len(names) - KEEP_ENTRIES)]:
            if old not in keep:
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


_STATUSES = ("pending", "applied", "failed", "undone")
_KINDS = ("create", "modify", "delete")
# The mtimes ``os.utime`` can set: seconds a ``datetime`` holds; nanoseconds a signed 64-bit
# integer holds (to 2262).
_MTIME_NS_MIN, _MTIME_NS_MAX = -(2**63), 2**63 - 1


def _optional(value: object, kind: type) -> bool:
    return value is None or (isinstance(value, kind) and not isinstance(value, bool))


def _check_entry(entry: JournalEntry) -> None:
    """Raise ``ValueError`` unless every field of ``entry`` has the type and range the journal
    writes: text fields ``str`` (``undoes``/``restores``/``note`` optional), ``time`` an ISO-8601
    time with a timestamp, ``status`` and each change's ``kind`` known words, ``format`` an int,
    SHA fields text or ``None``, ``before_mtime`` seconds in ``EPOCH_MIN … EPOCH_MAX`` and
    ``before_mtime_ns`` an int ``os.utime`` takes (or ``None``)."""
    if not all(isinstance(v, str) for v in (entry.id, entry.title, entry.time, entry.action)):
        raise ValueError("not an entry: a text field is not text")
    if entry.status not in _STATUSES or not all(_optional(v, str) for v in (entry.undoes, entry.restores, entry.note)):
        raise ValueError("not an entry: bad status or link")
    if isinstance(entry.format, bool) or not isinstance(entry.format, int):
        raise ValueError("not an entry: bad format")
    try:
        datetime.fromisoformat(entry.time).timestamp()
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"not an entry: bad time {entry.time[:40]!r}") from exc
    for c in entry.changes:
        if c.kind not in _KINDS or not _optional(c.before_sha, str) or not _optional(c.after_sha, str):
            raise ValueError("not an entry: bad change")
        if c.before_mtime is not None and json_number(c.before_mtime, EPOCH_MIN, EPOCH_MAX) is None:
            raise ValueError("not an entry: bad before_mtime")
        ns = c.before_mtime_ns
        if ns is not None and (not _optional(ns, int) or not _MTIME_NS_MIN <= ns <= _MTIME_NS_MAX):
            raise ValueError("not an entry: bad before_mtime_ns")


def _safe_relpath(relpath: object) -> bool:
    """A journal path must stay inside the memory dir: relative, no ``..``, no NUL."""
    if not isinstance(relpath, str) or not relpath or "\0" in relpath or "\\" in relpath:
        return False
    return not relpath.startswith("/") and ".." not in relpath.split("/")

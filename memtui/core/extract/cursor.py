"""The extraction cursor and the per-session lock, both in memtui's state dir.

The cursor says how far extraction has read one session's transcript: the ``uuid`` of the
last entry it covered (the reference keeps the same, ``lastMemoryMessageUuid``) and that
entry's index as a fallback for entries without a uuid. It moves only after an extraction
succeeded or was skipped by mutual exclusion (docs/behaviour.md §7 "The cursor advances only after
success").

Layout: ``<state>/memdirs/<slug of the memory dir>/extract/cursors/<slug of session id>.json``
and ``…/extract/locks/<slug>.lock``. The lock keeps two extractions of one session (two Stop
hooks in a row) from proposing the same things twice.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Self

from memtui.core.base.jsontext import loads_checked
from memtui.core.base.process import pid_alive
from memtui.core.base.safe_read import MAX_STATE_BYTES, read_text_regular
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.places.slug import slugify
from memtui.core.places.statedir import memdir_state
from memtui.core.sessions.transcripts import Transcript

# memtui's choice: a lock older than this is stale and is taken over. An extraction is at most
# 5 agent turns of at most 120 s each (``agent.REQUEST_TIMEOUT_S``) plus tools: well below 30 min.
LOCK_STALE_S = 1800


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far one session was read: ``message_uuid`` of the last covered entry (or ``None``),
    ``entry_index`` its 0-based index among parsed entries, ``updated`` ISO-8601."""

    session_id: str
    message_uuid: str | None
    entry_index: int
    updated: str
    transcript_path: str | None = None

    def start_in(self, transcript: Transcript) -> tuple[int, str | None]:
        """Where reading resumes in ``transcript``: ``(index of the first unread entry, note)``.

        Found by ``message_uuid``; an entry without uuid falls back to ``entry_index``. When
        the uuid is gone (the transcript was rewritten or compacted) reading starts over at 0,
        with a note saying so."""
        if self.message_uuid is not None:
            for entry in transcript.entries:
                if entry.uuid == self.message_uuid:
                    return entry.index + 1, None
            return 0, "the cursor's message is not in the transcript any more; read it all again"
        if 0 <= self.entry_index < len(transcript.entries):
            return self.entry_index + 1, None
        return 0, "the cursor points past the end of the transcript; read it all again"


def _cursor(raw: object) -> Cursor:
    """A stored cursor's fields as a ``Cursor``. Raises ``ValueError`` unless ``raw`` is an
    object whose ``session_id`` and ``updated`` are text, ``message_uuid`` and
    ``transcript_path`` text or ``null``, and ``entry_index`` an integer ≥ 0; ``TypeError``
    for an unknown field."""
    if not isinstance(raw, dict):
        raise ValueError("a cursor is a JSON object")
    index = raw.get("entry_index")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError("entry_index is not an index")
    if not isinstance(raw.get("session_id"), str) or not isinstance(raw.get("updated"), str):
        raise ValueError("a cursor's session_id and updated are text")
    if not all(raw.get(k) is None or isinstance(raw.get(k), str) for k in ("message_uuid", "transcript_path")):
        raise ValueError("a cursor's message_uuid and transcript_path are text or null")
    return Cursor(**raw)


class CursorStore:
    """The cursors (and locks) of one memory dir."""

    def __init__(self, state_dir: Path, memory_dir: Path) -> None:
        self.root = memdir_state(state_dir, memory_dir) / "extract"

    def _path(self, session_id: str) -> Path:
        return self.root / "cursors" / f"{slugify(session_id)}.json"

    def get(self, session_id: str) -> Cursor | None:
        """The cursor of ``session_id``, or ``None`` (never read, or a file that is unreadable,
        not JSON, or not a cursor: see ``_cursor``)."""
        try:
            return _cursor(loads_checked(read_text_regular(self._path(session_id), MAX_STATE_BYTES, errors="strict")))
        except (OSError, ValueError, TypeError):
            return None

    def set(self, cursor: Cursor) -> None:
        """Store ``cursor`` atomically. Raises ``OSError``."""
        data = json.dumps(asdict(cursor), ensure_ascii=False, indent=1).encode("utf-8")
        atomic_write_bytes(self._path(cursor.session_id), data)

    def lock(self, session_id: str) -> SessionLock:
        """The lock of ``session_id`` (not yet acquired)."""
        return SessionLock(self.root / "locks" / f"{slugify(session_id)}.lock")


class SessionLock:
    """An exclusive lock file holding the owner's PID. ``acquire`` is non-blocking: ``False``
    when a live process holds it and it is younger than ``LOCK_STALE_S``; a stale or orphaned
    lock is taken over."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.held = False

    def acquire(self) -> bool:
        """Take the lock; ``True`` on success. Raises ``OSError`` when the state dir is unusable."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if self._live():
                    return False
                self.path.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            self.held = True
            return True
        return False

    def _live(self) -> bool:
        try:
            pid_text = read_text_regular(self.path, MAX_STATE_BYTES).strip()
            age = time.time() - self.path.stat().st_mtime
        except OSError:
            return False
        try:
            pid = int(pid_text)
        except ValueError:
            return age < 5  # being written right now
        return age < LOCK_STALE_S and pid_alive(pid)  # pid_alive: 0, negative or 26 digits is no holder

    def release(self) -> None:
        """Drop the lock if this object holds it."""
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

"""memtui's store of what each transcript says about memory use, so that a transcript already
counted and unchanged is not read again.

One SQLite database per memory dir in memtui's state dir
(``<state>/memdirs/<key>/usage.sqlite3``, never inside the memory dir). Per transcript: its
``stat`` key ``(size, mtime_ns, inode)`` when read and where the reading stopped
(``TranscriptState`` without its uses); per use, one row. A transcript whose key is unchanged is
not opened; one that only grew (same inode, larger) is read from where it stopped; any other
change reads it again from the start. The whole store is dropped when the reader's code changes
(``reader_fingerprint``). It is only a cache: a store that cannot be opened or written is
replaced by an in-memory one for the run, and every answer is the same without it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from .uses import MemoryUse, TranscriptState

STORE_NAME = "usage.sqlite3"
SCHEMA = 1
# memtui's bound on waiting for another memtui process's write to the store.
BUSY_TIMEOUT_S = 5.0
_STATE_FIELDS = ("offset", "lines", "skipped", "session_id", "cwd", "version", "first_time", "last_time", "start_tokens", "recalled_units")


def reader_fingerprint() -> str:
    """memtui's version and the size + mtime (ns) of the transcript reader's source: a change
    to either drops the store."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        parts = [version("memtui"), str(SCHEMA)]
    except PackageNotFoundError:
        parts = ["dev", str(SCHEMA)]
    here = Path(__file__).resolve().parent
    for name in ("uses.py", "usage_store.py"):
        try:
            st = (here / name).stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:?")
    return ";".join(parts)


_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS transcripts (
    path TEXT PRIMARY KEY, session_id TEXT NOT NULL, agent_id TEXT, project_dir TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL, first_time REAL, last_time REAL,
    state BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS uses (
    transcript TEXT NOT NULL, kind TEXT NOT NULL, relpath TEXT NOT NULL, time REAL, line INTEGER NOT NULL,
    uuid TEXT, tool TEXT NOT NULL, key TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS summary (
    relpath TEXT PRIMARY KEY, recalled INTEGER, read INTEGER, written INTEGER, sessions INTEGER, first REAL, last REAL
);
CREATE INDEX IF NOT EXISTS uses_by_transcript ON uses (transcript);
CREATE INDEX IF NOT EXISTS uses_by_relpath ON uses (relpath);
"""


def _db(text: str | None) -> str | bytes | None:
    """``text`` as stored: itself, or — a file name that is not UTF-8 (lone surrogates) — its
    bytes (a BLOB; SQLite text must be UTF-8). The same text always maps to the same value."""
    if text is None:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape")
    return text


def _py(value: Any) -> Any:
    """A stored value back as text (see ``_db``)."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def state_blob(state: TranscriptState) -> bytes:
    """``state`` without its uses, as stored."""
    data: dict[str, Any] = {k: getattr(state, k) for k in _STATE_FIELDS}
    data["pending"] = sorted(state.pending)
    data["errored"] = sorted(state.errored)
    return orjson.dumps(data)


def state_from(blob: bytes, uses: Iterable[MemoryUse]) -> TranscriptState:
    """A stored state with its ``uses``. Raises ``ValueError`` on a blob it cannot read."""
    data = orjson.loads(blob)
    if not isinstance(data, dict):
        raise ValueError("not a stored state")
    state = TranscriptState()
    for k in _STATE_FIELDS:
        if k in data:
            setattr(state, k, data[k])
    state.pending = set(data.get("pending") or ())
    state.errored = set(data.get("errored") or ())
    state.uses = list(uses)
    return state


class UsageStore:
    """The store of one memory dir (see the module docstring). Thread-safe: one connection,
    used under a lock."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.problem: str | None = None
        self._conn = self._open(path)
        self.generation = 0  # counts the changes made through this store (in this process)

    @classmethod
    def for_memory_dir(cls, state_dir: Path, memory_dir: Path) -> UsageStore:
        """The store in ``state_dir`` for ``memory_dir`` (in memory when the state dir is
        inside the memory dir or cannot be created)."""
        from memtui.core.places.statedir import StateDirInsideMemoryDirError, memdir_state

        try:
            folder = memdir_state(state_dir, memory_dir)
            folder.mkdir(parents=True, exist_ok=True)
        except (StateDirInsideMemoryDirError, OSError) as exc:
            store = cls(None)
            store.problem = f"usage cache in memory only: {exc}"
            return store
        return cls(folder / STORE_NAME)

    def _open(self, path: Path | None) -> sqlite3.Connection:
        fingerprint = reader_fingerprint()
        if path is not None:
            try:
                conn = self._connect(str(path), fingerprint)
                return conn
            except sqlite3.DatabaseError as exc:
                try:  # a torn or foreign file: start again
                    os.unlink(path)
                    return self._connect(str(path), fingerprint)
                except (OSError, sqlite3.DatabaseError):
                    self.problem = f"usage cache in memory only: {path}: {exc}"
        return self._connect(":memory:", fingerprint)

    @staticmethod
    def _connect(target: str, fingerprint: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL" if target != ":memory:" else "PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_DDL)
        row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None or row[0] != fingerprint:
            conn.executescript("BEGIN; DELETE FROM uses; DELETE FROM transcripts; DELETE FROM summary; DELETE FROM meta; COMMIT;")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    @staticmethod
    def _changed(conn: sqlite3.Connection) -> None:
        """In a write transaction: the stored uses change, the kept summary is stale."""
        conn.execute("DELETE FROM summary")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('version', CAST(COALESCE((SELECT value FROM meta WHERE key = 'version'), '0') AS INTEGER) + 1)")
        conn.execute("DELETE FROM meta WHERE key = 'summary'")

    def known(self) -> dict[str, tuple[int, int, int]]:
        """Every stored transcript's path with its stat key ``(size, mtime_ns, inode)``."""
        with self._lock:
            rows = self._conn.execute("SELECT path, size, mtime_ns, inode FROM transcripts").fetchall()
        return {_py(r[0]): (r[1], r[2], r[3]) for r in rows}

    def load_state(self, path: str) -> TranscriptState | None:
        """The stored state of ``path`` with its uses, or ``None`` (not stored, unreadable)."""
        with self._lock:
            row = self._conn.execute("SELECT state FROM transcripts WHERE path = ?", (_db(path),)).fetchone()
            if row is None:
                return None
            uses = self._conn.execute(
                "SELECT kind, relpath, time, line, uuid, tool, key FROM uses WHERE transcript = ? ORDER BY rowid", (_db(path),)
            ).fetchall()
        try:
            return state_from(row[0], (MemoryUse(u[0], _py(u[1]), *u[2:]) for u in uses))
        except (ValueError, TypeError):
            return None

    def save(self, rows: Sequence[tuple[str, str, str | None, str, tuple[int, int, int], TranscriptState]]) -> None:
        """Store transcripts as read: ``(path, session_id, agent_id, project_dir, (size,
        mtime_ns, inode), state)`` each, their uses replacing the stored ones, in one
        transaction."""
        if not rows:
            return
        self.generation += 1
        with self._tx() as conn:
            self._changed(conn)
            for text_path, session, agent, pdir, (size, mtime_ns, inode), state in rows:
                path = _db(text_path)
                conn.execute("DELETE FROM uses WHERE transcript = ?", (path,))
                conn.execute(
                    "INSERT OR REPLACE INTO transcripts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (path, _db(session), _db(agent), _db(pdir), size, mtime_ns, inode, state.first_time,
                     state.last_time if state.last_time is not None else state.first_time, state_blob(state)),
                )
                conn.executemany(
                    "INSERT INTO uses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(path, u.kind, _db(u.relpath), u.time, u.line, _db(u.uuid), _db(u.tool), _db(u.key)) for u in state.uses],
                )

    def forget(self, paths: Iterable[str]) -> None:
        """Drop transcripts that are gone (and their uses)."""
        gone = list(paths)
        if not gone:
            return
        self.generation += 1
        with self._tx() as conn:
            self._changed(conn)
            conn.executemany("DELETE FROM uses WHERE transcript = ?", [(_db(p),) for p in gone])
            conn.executemany("DELETE FROM transcripts WHERE path = ?", [(_db(p),) for p in gone])

    def transcripts(self) -> list[tuple[str, str, str | None, str, int, TranscriptState]]:
        """Every stored transcript: ``(path, session_id, agent_id, project_dir, mtime_ns,
        state)`` (the state without its uses), in path order."""
        with self._lock:
            rows = self._conn.execute("SELECT path, session_id, agent_id, project_dir, mtime_ns, state FROM transcripts ORDER BY path").fetchall()
        out = []
        for path, session, agent, pdir, mtime_ns, blob in rows:
            try:
                out.append((_py(path), _py(session), _py(agent), _py(pdir), mtime_ns, state_from(blob, ())))
            except (ValueError, TypeError):
                continue
        return out

    def owners(self) -> dict[str, tuple[str, str | None]]:
        """Every stored transcript's path with its ``(session_id, agent_id)``."""
        with self._lock:
            rows = self._conn.execute("SELECT path, session_id, agent_id FROM transcripts").fetchall()
        return {_py(r[0]): (_py(r[1]), _py(r[2])) for r in rows}

    def uses(self, relpath: str | None = None) -> list[tuple[str, MemoryUse]]:
        """Stored uses as ``(transcript path, use)``, in transcript then file order; only those
        of ``relpath`` when given."""
        query = "SELECT transcript, kind, relpath, time, line, uuid, tool, key FROM uses"
        args: tuple[str | bytes | None, ...] = ()
        if relpath is not None:
            query += " WHERE relpath = ?"
            args = (_db(relpath),)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY transcript, rowid", args).fetchall()
        return [(_py(r[0]), MemoryUse(r[1], _py(r[2]), r[3], r[4], _py(r[5]), _py(r[6]), _py(r[7]))) for r in rows]

    def aggregate(self, since: float | None = None) -> list[tuple[str, int, int, int, int, float | None, float | None]]:
        """Per file: ``(relpath, recalled, read, written, sessions, first use, last use)``
        (epoch s), each use counted once across transcripts (by its ``key``), a sub-agent's for
        its session, in path order. With ``since`` (epoch s): only transcripts active since
        then (their last line, else their mtime) and uses from then on (or without a time).

        One plain query and a pass in Python (SQLite's GROUP BY over the three keys costs three
        to four times as much); the result over all sessions is kept in the store until the
        uses change, so the next process reads it back instead."""
        if since is None:
            with self._lock:
                self._conn.execute("BEGIN")
                try:
                    valid = self._conn.execute("SELECT value FROM meta WHERE key = 'summary'").fetchone() is not None
                    if valid:
                        kept = self._conn.execute("SELECT * FROM summary ORDER BY relpath").fetchall()
                    version = self._conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
                finally:
                    self._conn.execute("COMMIT")
            if valid:
                return [(_py(r[0]), r[1], r[2], r[3], r[4], r[5], r[6]) for r in kept]
            result = self._aggregate(None)
            with self._tx() as conn:
                now_version = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
                if now_version == version:  # nobody changed the uses meanwhile
                    conn.executemany("INSERT OR REPLACE INTO summary VALUES (?, ?, ?, ?, ?, ?, ?)", [(_db(r[0]), *r[1:]) for r in result])
                    conn.execute("INSERT OR REPLACE INTO meta VALUES ('summary', '1')")
            return result
        return self._aggregate(since)

    def _aggregate(self, since: float | None) -> list[tuple[str, int, int, int, int, float | None, float | None]]:
        query = """
            SELECT uses.relpath, uses.kind, uses.key, uses.time, t.session_id
            FROM uses JOIN transcripts t ON t.path = uses.transcript
            WHERE :since IS NULL OR ((t.last_time >= :since OR (t.last_time IS NULL AND t.mtime_ns >= :since * 1e9))
                                     AND (uses.time IS NULL OR uses.time >= :since))"""
        with self._lock:
            rows = self._conn.execute(query, {"since": since}).fetchall()
        seen: set[tuple[str, str, str]] = set()
        agg: dict[str, list[Any]] = {}
        slot = {"recalled": 0, "read": 1, "written": 2}
        for raw_rel, kind, key, when, session in rows:
            rel = _py(raw_rel)
            k = (rel, kind, key)
            if k in seen:
                continue
            seen.add(k)
            a = agg.get(rel)
            if a is None:
                a = agg[rel] = [0, 0, 0, set(), None, None]
            a[slot.get(kind, 2)] += 1
            a[3].add(session)
            if when is not None:
                if a[4] is None or when < a[4]:
                    a[4] = when
                if a[5] is None or when > a[5]:
                    a[5] = when
        return [(rel, a[0], a[1], a[2], len(a[3]), a[4], a[5]) for rel, a in sorted(agg.items())]

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - a debugging aid
        """Counts, for a person looking at the store."""
        with self._lock:
            n_t = self._conn.execute("SELECT COUNT(*) FROM transcripts").fetchone()[0]
            n_u = self._conn.execute("SELECT COUNT(*) FROM uses").fetchone()[0]
        return {"path": str(self.path), "transcripts": n_t, "uses": n_u, "problem": self.problem}


__all__ = ["STORE_NAME", "UsageStore", "reader_fingerprint", "state_blob", "state_from"]

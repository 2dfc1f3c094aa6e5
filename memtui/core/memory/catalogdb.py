"""The catalog database of one memory dir: what parsing each memory found, per-memory derived
data, and a full-text index, in one SQLite file keyed by each file's ``stat``.

Parsing 100,000 memories (YAML frontmatter, lint, SHA-256) costs seconds; a ``stat`` of each
costs a fraction of that. A row per memory keeps the record ``parse_memory_bytes`` derived
(``memtui.core.memory.memories``), under the key ``(st_mtime_ns, st_size, st_ino,
st_ctime_ns)``: any write to a file changes its ctime (and rename-over its inode), so a
matching key means the same bytes — the rule git's index uses. Like git, it does not trust a
file modified within ``RACY_SECONDS`` of being read — by its mtime or its ctime, so a rewrite
touched back to an old mtime counts too (a second write in the same clock tick could keep the
key): such files are parsed again until older.

Besides the rows:

- **derived data** (``derived`` / ``put_derived``): per memory and ``kind`` (the doctor's
  per-memory findings, an embedding…), stored under the same stat key and a ``fingerprint`` of
  the code that made it; valid only while both match.
- **results** (``result`` / ``put_result``): one value per ``kind`` for the whole memory dir
  (the near-duplicate pairs), valid while its ``fingerprint`` matches.
- **search** (``memtui.core.memory.search``): an FTS5 ``trigram`` index (substrings, CJK) of
  each memory's name, description, path and body, filled by ``index_for_search``.

The file lives in memtui's state dir for the memory dir (``<state>/memdirs/<key>/catalog.sqlite3``,
never inside the memory dir); SQLite in WAL mode, so readers never wait for a writer and a
writer waits at most ``BUSY_SECONDS`` for another (then skips: it is only a cache). It is
invalidated as a whole when memtui's parser changes (``code_fingerprint``: the version plus the
size and mtime of the parsing modules). Deleting it is always safe; a file that is not a
SQLite database, another application's or another schema's, or one SQLite reports damaged is
deleted and rebuilt, never trusted; a row whose values have the wrong shape is parsed again.
Values are JSON (orjson): loading the database never runs code.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from memtui.core.places.behaviour import MemoryFormat

# A file modified this recently when it was read is parsed again next time (git's "racy" rule).
RACY_SECONDS = 2
DB_NAME = "catalog.sqlite3"
# The JSON caches this database replaces (removed when found).
_OLD_CACHES = ("scan-cache.json", "header-cache.json")
# PRAGMA user_version of this layout; another value is another schema: rebuilt.
SCHEMA_VERSION = 4
# PRAGMA application_id: "memt" (a SQLite file of another application is rebuilt, not read).
APPLICATION_ID = 0x6D656D74
# How long a writer waits for another process's write transaction before giving up (seconds).
BUSY_SECONDS = 5.0
# The modules whose code decides what a parse yields: a change to any invalidates the rows.
_PARSER_MODULES = (
    "memory/memories",
    "memory/headers",
    "memory/frontmatter",
    "memory/plainyaml",
    "memory/yaml12",
    "memory/lint",
    "base/diagnostics",
    "memory/catalogdb",
)
_SQLITE_BUSY = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED: another process holds it; not damage

StatKey = tuple[int, int, int, int]
_SURROGATE = re.compile("[\ud800-\udfff]")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories(
    relpath TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    record BLOB,
    header BLOB,
    fts_id INTEGER,
    fts_exact INTEGER NOT NULL DEFAULT 1,
    mtime_ns INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS memories_newest ON memories(mtime_ns DESC, relpath);
CREATE TABLE IF NOT EXISTS derived(
    relpath TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY(relpath, kind)
);
CREATE TABLE IF NOT EXISTS results(kind TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, value BLOB NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(text, tokenize='trigram case_sensitive 1', detail=none, content='');
"""


def stat_key(st: os.stat_result) -> StatKey:
    """``(st_mtime_ns, st_size, st_ino, st_ctime_ns)`` of a ``stat`` result."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def _key_text(key: StatKey) -> str:
    return f"{key[0]}:{key[1]}:{key[2]}:{key[3]}"


def is_racy(key: StatKey) -> bool:
    """Whether a file with this ``stat`` key was modified (mtime or ctime) less than
    ``RACY_SECONDS`` ago by the wall clock: its bytes may still change under the same key."""
    return max(key[0], key[3]) > time.time_ns() - RACY_SECONDS * 1_000_000_000


@lru_cache(maxsize=1)
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memtui")
    except PackageNotFoundError:
        return "dev"


def code_fingerprint(modules: Iterable[str] = _PARSER_MODULES) -> str:
    """memtui's version and the size + mtime (ns) of each of ``modules`` (paths below
    ``memtui/core`` without ``.py``; default: the parsing modules)."""
    parts = [_version()]
    core = Path(__file__).resolve().parent.parent
    for name in modules:
        try:
            st = (core / f"{name}.py").stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:?")
    return ";".join(parts)


def core_fingerprint() -> str:
    """``code_fingerprint`` of every module of ``memtui.core`` (~200 ``stat`` calls): for a
    result that any of memtui's code may shape (the doctor's report, the conflicts)."""
    core = Path(__file__).resolve().parent.parent
    return code_fingerprint(sorted(p.relative_to(core).with_suffix("").as_posix() for p in core.rglob("*.py")))


def jsonable(value: object, depth: int = 0) -> bool:
    """Whether ``value`` survives a JSON round trip unchanged (str keys, finite floats, 64-bit
    ints, no tuples); frontmatter that does not is simply not stored."""
    if isinstance(value, str):  # a lone surrogate (a YAML "\ud800" escape) has no UTF-8 form
        return value.isascii() or _SURROGATE.search(value) is None
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    if isinstance(value, float):
        return math.isfinite(value)
    if depth > 20:
        return False
    if isinstance(value, list):
        return all(jsonable(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and jsonable(k) and jsonable(v, depth + 1) for k, v in value.items())
    return False


def pack(value: object) -> bytes:
    """``value`` as JSON bytes for a column (orjson), in an object of exactly its length.

    orjson's own result keeps the buffer it was written into — 4,097 bytes held for a 19-byte
    header (orjson 3.13, measured with ``tracemalloc``) — and a cold scan holds one or two per
    memory until ``save``: 160 MB more at 20,000 memories. The copy costs a few microseconds."""
    return memoryview(orjson.dumps(value)).tobytes()


def storable(relpath: str) -> bool:
    """Whether ``relpath`` can be a row's key: SQLite text is UTF-8, so a file name that is
    not (its bytes kept as lone surrogates) has no row and is parsed on every scan."""
    return relpath.isascii() or _SURROGATE.search(relpath) is None


def _damaged(exc: sqlite3.Error) -> bool:
    """An error that says the file cannot be trusted (anything but another process's lock)."""
    return getattr(exc, "sqlite_errorcode", None) not in _SQLITE_BUSY and not (
        isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))
    )


class CatalogDB:
    """The catalog database of one memory dir (see the module docstring). ``path`` ``None``:
    disabled (every lookup misses, nothing is written). Never raises ``sqlite3`` errors: a
    damaged file is rebuilt, a busy one skipped.

    Records and headers are plain JSON lists, opaque here: ``memtui.core.memory.memories`` and
    ``memtui.core.memory.headers`` write and read them. One instance serves one thread at a
    time (a lock guards its connection).
    """

    def __init__(self, path: Path | None, memory_dir: Path) -> None:
        self.path = path
        self.memory_dir = str(memory_dir)
        self._fingerprint = code_fingerprint() if path is not None else ""
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._records: dict[str, tuple[str, bytes | None]] | None = None  # relpath -> (key, record)
        self._headers: dict[str, tuple[str, bytes | None]] | None = None  # relpath -> (key, header)
        self._new: dict[str, tuple[str, bytes | None, bytes | None]] = {}  # relpath -> (key, record, header) to write
        self._forget: set[str] = set()  # racy files whose rows are dropped
        self._seen: set[str] = set()
        self.hits = 0
        self.misses = 0
        self.rebuilt = False  # the file was damaged or foreign and was started afresh
        if path is not None:
            self._open()

    @classmethod
    def for_memory_dir(cls, state_dir: Path | None, memory_dir: Path, *, fmt: MemoryFormat | None = None) -> CatalogDB:
        """The database of ``memory_dir`` in ``state_dir`` (memtui's state dir); ``fmt``: the
        memory format the scans read with (each format has its own database: what a parse finds
        depends on it). Disabled when ``state_dir`` is ``None`` or lies inside the memory dir.
        Never raises."""
        if state_dir is None:
            return cls(None, memory_dir)
        name = DB_NAME if fmt is None or fmt.key == "seed" else DB_NAME.replace(".sqlite3", f".{fmt.key}.sqlite3")
        from memtui.core.places.statedir import memdir_state

        try:
            folder = memdir_state(state_dir, memory_dir)
        except OSError:  # StateDirInsideMemoryDirError, or a path that cannot be resolved
            return cls(None, memory_dir)
        return cls(folder / name, memory_dir)

    # ----- the file -------------------------------------------------------------------------

    def _open(self) -> None:
        assert self.path is not None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            for old in _OLD_CACHES:
                (self.path.parent / old).unlink(missing_ok=True)
            self._clear_path()
        except OSError:
            self._disable()
            return
        for attempt in range(2):
            try:
                self._conn = self._connect()
                return
            except sqlite3.Error as exc:
                self._close()
                if attempt or not _damaged(exc):
                    self._disable()
                    return
                self._delete_files()
                self.rebuilt = True
            except OSError:
                self._close()
                self._disable()
                return

    def _clear_path(self) -> None:
        """A FIFO, a directory or a symlink planted at the path is removed (opening a FIFO
        would block); the journal files of a database that is gone are removed too (SQLite
        would replay a stale WAL into a new file)."""
        assert self.path is not None
        for path in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                os.rmdir(path)  # an empty one; a full one raises: disabled
            elif not stat.S_ISREG(st.st_mode):
                os.unlink(path)
        if not self.path.exists():
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _connect(self) -> sqlite3.Connection:
        assert self.path is not None
        conn = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            app, version = conn.execute("PRAGMA application_id").fetchone()[0], conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            if (app, version) == (0, 0) and not tables:  # a new, empty file
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                conn.executescript(_SCHEMA)  # (commits)
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('memory_dir', ?), ('code', ?), ('fts_next', '1')", (self.memory_dir, self._fingerprint))
            elif (app, version) != (APPLICATION_ID, SCHEMA_VERSION):
                raise sqlite3.DatabaseError("another application's or another schema's file")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("memory_dir") != self.memory_dir:
                raise sqlite3.DatabaseError("the database of another memory dir")
            if meta.get("code") != self._fingerprint:  # the parser changed: every row is stale
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("DELETE FROM memories")
                conn.execute("DELETE FROM derived")
                conn.execute("DELETE FROM results")
                _empty_search(conn)
                conn.execute("UPDATE meta SET value = ? WHERE key = 'code'", (self._fingerprint,))
                conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        return conn

    def _delete_files(self) -> None:
        assert self.path is not None
        for suffix in ("", "-wal", "-shm"):
            try:
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            except OSError:
                pass

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def _disable(self) -> None:
        self._close()
        self.path = None

    def _failed(self, exc: sqlite3.Error) -> None:
        """A query failed: a damaged file is deleted and started afresh (nothing read from it
        is used); a busy one is left alone."""
        if not _damaged(exc) or self.path is None:
            return
        self._close()
        self._delete_files()
        self.rebuilt = True
        self._records = {} if self._records is not None else None
        self._headers = {} if self._headers is not None else None
        try:
            self._conn = self._connect()
        except (sqlite3.Error, OSError):
            self._disable()

    def close(self) -> None:
        """Close the connection (a later use reopens nothing: the instance is done)."""
        with self._lock:
            self._close()

    @property
    def enabled(self) -> bool:
        """Whether rows are read and written (a state dir, an openable file)."""
        return self._conn is not None

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        """Rows of one read; ``[]`` (and the file rebuilt when damaged) on an error."""
        with self._lock:
            if self._conn is None:
                return []
            try:
                return self._conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                self._failed(exc)
                return []

    # ----- rows ---------------------------------------------------------------------------

    def _load_records(self) -> dict[str, tuple[str, bytes | None]]:
        if self._records is None:
            self._records = {rel: (key, rec) for rel, key, rec in self._query("SELECT relpath, key, record FROM memories")}
        return self._records

    def _load_headers(self) -> dict[str, tuple[str, bytes | None]]:
        if self._headers is None:
            self._headers = {rel: (key, head) for rel, key, head in self._query("SELECT relpath, key, header FROM memories")}
        return self._headers

    @staticmethod
    def _decode(blob: bytes | None) -> list[Any] | None:
        if blob is None:
            return None
        try:
            value = orjson.loads(blob)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, list) else None

    def lookup(self, relpath: str, key: StatKey) -> list[Any] | None:
        """The parse record stored for ``relpath`` under exactly ``key``, else ``None``."""
        self._seen.add(relpath)
        row = self._load_records().get(relpath) if self._conn is not None else None
        if row is not None and row[0] == _key_text(key) and (value := self._decode(row[1])) is not None:
            self.hits += 1
            return value
        self.misses += 1
        return None

    def lookup_header(self, relpath: str, key: StatKey) -> list[Any] | None:
        """The header stored for ``relpath`` under exactly ``key``, else ``None``."""
        self._seen.add(relpath)
        row = self._load_headers().get(relpath) if self._conn is not None else None
        if row is not None and row[0] == _key_text(key) and (value := self._decode(row[1])) is not None:
            self.hits += 1
            return value
        self.misses += 1
        return None

    def lookup_file(self, path: str | os.PathLike[str], relpath: str, *, header: bool = False) -> tuple[list[Any] | None, os.stat_result | None]:
        """``stat`` ``path`` (a regular file, following links) and look its record (or, with
        ``header``, its header) up: the value (or ``None``) and the ``stat`` result (``None``
        when it cannot be taken or the path is not a regular file). Never raises."""
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None, None
        if not stat.S_ISREG(st.st_mode):
            return None, None
        key = stat_key(st)
        return (self.lookup_header(relpath, key) if header else self.lookup(relpath, key)), st

    def store(self, relpath: str, key: StatKey, record: list[Any] | None, header: list[Any] | None) -> bool:
        """Remember ``record`` (a parse; ``None``: only the header is known) and ``header``
        (``None``: not known) for ``relpath`` at ``key`` — unless the file is racy (then its
        row is dropped) or the database is disabled. Written by ``save``. Returns whether it
        is kept."""
        self._seen.add(relpath)
        if self._conn is None or not storable(relpath):
            return False
        if is_racy(key):
            self._forget.add(relpath)
            self._new.pop(relpath, None)
            return False
        rec = None if record is None else pack(record)
        head = None if header is None else pack(header)
        self._new[relpath] = (_key_text(key), rec, head)
        self._forget.discard(relpath)
        return True

    def save(self, *, complete: bool) -> None:
        """Write what changed. ``complete``: this scan saw every file, so rows of files it did
        not see (deleted, renamed) are dropped, with their derived data. Never raises."""
        with self._lock:
            if self._conn is None:
                return
            gone: list[str] = []
            if complete:
                known = self._records if self._records is not None else self._headers
                if known is None:
                    known = {rel: ("", None) for (rel,) in self._query("SELECT relpath FROM memories")}
                gone = [rel for rel in known if rel not in self._seen]
            drop = [*gone, *(rel for rel in self._forget if rel not in self._new)]
            if not self._new and not drop:
                return
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                if drop:
                    self._conn.executemany("DELETE FROM memories WHERE relpath = ?", ((rel,) for rel in drop))
                    self._conn.executemany("DELETE FROM derived WHERE relpath = ?", ((rel,) for rel in drop))
                # a changed file's indexed text is left in `search` as a stale entry: its row
                # no longer points at it (``fts_id`` NULL), so no query returns it
                self._conn.executemany(
                    "INSERT INTO memories(relpath, key, record, header, mtime_ns) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT(relpath) DO UPDATE SET "
                    # a header scan after a full one keeps the parse stored under the same key
                    "record = CASE WHEN excluded.record IS NULL AND memories.key = excluded.key THEN memories.record ELSE excluded.record END, "
                    "header = CASE WHEN excluded.header IS NULL AND memories.key = excluded.key THEN memories.header ELSE excluded.header END, "
                    "fts_id = CASE WHEN memories.key = excluded.key THEN memories.fts_id END, "
                    "fts_exact = CASE WHEN memories.key = excluded.key THEN memories.fts_exact ELSE 1 END, "
                    "key = excluded.key, mtime_ns = excluded.mtime_ns",
                    ((rel, key, rec, head, int(key.split(":", 1)[0])) for rel, (key, rec, head) in self._new.items()),
                )
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                self._failed(exc)
                return
            for rel, (key, rec, head) in self._new.items():
                for rows, value in ((self._records, rec), (self._headers, head)):
                    if rows is not None:
                        old = rows.get(rel)
                        rows[rel] = (key, old[1] if value is None and old is not None and old[0] == key else value)
            for rel in drop:
                for known_rows in (self._records, self._headers):
                    if known_rows is not None:
                        known_rows.pop(rel, None)
            self._new.clear()
            self._forget.clear()

    def _rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def newest(self, n: int) -> tuple[int, list[tuple[str, str, list[Any] | None]]]:
        """The rows of the ``n`` most recently modified memories the database knows, by the
        mtime of their key (newest first, ties by relpath), read through an index without
        loading the other rows: ``(rows in the database, [(relpath, key text, record or None)])``.
        A record of the wrong shape is ``None``. ``(0, [])`` when disabled. What the database
        knows is what the last scans saw: a caller checks each file's ``stat`` against its key,
        and a full scan is still the truth about which files exist."""
        count = self._query("SELECT count(*) FROM memories")
        if not count or not count[0][0]:
            return 0, []
        rows = self._query("SELECT relpath, key, record FROM memories ORDER BY mtime_ns DESC, relpath LIMIT ?", (n,))
        return count[0][0], [(rel, key, self._decode(rec)) for rel, key, rec in rows]

    def release_records(self) -> None:
        """Let go of the parse records this instance read into memory, keeping each row's key
        (``stored_key`` still answers): for a caller that holds a whole scan's result and goes
        on with other work (the dream: about 80 MB at 100,000 memories). A later ``lookup``
        reads a record no more: it is a miss, and the file is parsed again."""
        with self._lock:
            if self._records is not None:
                self._records = {rel: (key, None) for rel, (key, _) in self._records.items()}

    def stored_key(self, relpath: str) -> str | None:
        """The key text of ``relpath``'s row as this instance knows it (after ``save``)."""
        for rows in (self._records, self._headers):
            if rows is not None and relpath in rows:
                return rows[relpath][0]
        return None

    # ----- derived data -------------------------------------------------------------------

    def derived(self, kind: str, fingerprint: str) -> dict[str, tuple[str, bytes]]:
        """``relpath -> (key text, value)`` of every ``kind`` value stored under
        ``fingerprint`` (check the key against the file's before use: ``key_text``)."""
        rows = self._query("SELECT relpath, key, value FROM derived WHERE kind = ? AND fingerprint = ?", (kind, fingerprint))
        return {rel: (key, value) for rel, key, value in rows}

    def put_derived(self, kind: str, fingerprint: str, values: Mapping[str, tuple[str, bytes]]) -> None:
        """Store ``relpath -> (key text, value)`` as ``kind`` under ``fingerprint``. The key
        must be the memory's row key (``stored_key``: a row exists only for a file that was
        not racy) and the value made from the bytes that row describes. Never raises."""
        items = [(rel, kind, key, fingerprint, value) for rel, (key, value) in values.items() if storable(rel)]
        if not items:
            return
        self._write(lambda conn: conn.executemany("INSERT OR REPLACE INTO derived VALUES (?, ?, ?, ?, ?)", items))

    def result(self, kind: str, fingerprint: str) -> bytes | None:
        """The whole-dir ``kind`` value stored under ``fingerprint``, else ``None``."""
        rows = self._query("SELECT value FROM results WHERE kind = ? AND fingerprint = ?", (kind, fingerprint))
        return rows[0][0] if rows else None

    def put_result(self, kind: str, fingerprint: str, value: bytes) -> None:
        """Store the whole-dir ``kind`` value under ``fingerprint``. Never raises."""
        self._write(lambda conn: conn.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", (kind, fingerprint, value)))

    def _write(self, do: Any) -> bool:
        with self._lock:
            if self._conn is None:
                return False
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                do(self._conn)
                self._conn.execute("COMMIT")
                return True
            except sqlite3.Error as exc:
                self._rollback()
                self._failed(exc)
                return False

    # ----- the search index (used by memtui.core.memory.search) -----------------------------

    def search_rows(self) -> list[tuple[str, str, int | None, int]]:
        """``(relpath, key text, fts_id, fts_exact)`` of every row."""
        return self._query("SELECT relpath, key, fts_id, fts_exact FROM memories")

    def fts_match(self, query: str) -> set[int] | None:
        """The ``search`` rowids matching the FTS5 ``query`` (``None``: the index cannot be
        used now)."""
        with self._lock:
            if self._conn is None:
                return None
            try:
                return {r[0] for r in self._conn.execute("SELECT rowid FROM search WHERE search MATCH ?", (query,))}
            except sqlite3.Error as exc:
                self._failed(exc)
                return None

    def index_texts(self, texts: Mapping[str, tuple[str, str, bool]]) -> dict[str, int]:
        """Add ``relpath -> (key text, text, exact)`` to the search index, for rows still at
        that key; returns ``relpath -> search rowid`` of those added. Never raises."""
        added: dict[str, int] = {}

        def do(conn: sqlite3.Connection) -> None:
            next_id = int(conn.execute("SELECT value FROM meta WHERE key = 'fts_next'").fetchone()[0])
            for rel, (key, text, exact) in texts.items():
                if not storable(rel):
                    continue
                cur = conn.execute("UPDATE memories SET fts_id = ?, fts_exact = ? WHERE relpath = ? AND key = ? AND fts_id IS NULL", (next_id, int(exact), rel, key))
                if cur.rowcount:
                    conn.execute("INSERT INTO search(rowid, text) VALUES (?, ?)", (next_id, text))
                    added[rel] = next_id
                    next_id += 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'fts_next'", (str(next_id),))

        return added if self._write(do) else {}

    def reset_search(self) -> None:
        """Empty the search index (every row to be indexed again, ``search_size`` back to 0):
        when it holds more stale entries than live ones. Never raises."""

        def do(conn: sqlite3.Connection) -> None:
            _empty_search(conn)
            conn.execute("UPDATE memories SET fts_id = NULL, fts_exact = 1")

        self._write(do)

    def search_size(self) -> int:
        """Entries in the search index, stale ones included."""
        rows = self._query("SELECT value FROM meta WHERE key = 'fts_next'")
        return int(rows[0][0]) - 1 if rows else 0


def _empty_search(conn: sqlite3.Connection) -> None:
    """Empty the search index and restart its entry count (``search_size`` counts the entries
    ever added, stale ones included: a count left behind would empty a fresh index again)."""
    conn.execute("INSERT INTO search(search) VALUES ('delete-all')")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'fts_next'")


def key_text(key: StatKey) -> str:
    """The text form of a stat key, as ``CatalogDB.derived`` returns it."""
    return _key_text(key)

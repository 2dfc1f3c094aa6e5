"""A persistent cache of what parsing each memory file found, keyed by the file's ``stat``.

Parsing 20,000 memories (YAML frontmatter, lint, SHA-256) costs ~1.7 s; a ``stat`` of each costs
~40 ms. The cache keeps, per file, the fields and diagnostics ``parse_memory_bytes`` derived,
under the key ``(st_mtime_ns, st_size, st_ino, st_ctime_ns)``: any write to a file changes its
ctime (and rename-over changes its inode), so a matching key means the same bytes — the rule
git's index uses. Like git, it does not trust a file modified within ``RACY_SECONDS`` of being
read — by its mtime or its ctime, so a rewrite touched back to an old mtime counts too (a second
write in the same clock tick could keep the key): such files are parsed again until older.

The cache lives in memtui's state dir for the memory dir (``<state>/memdirs/<key>/scan-cache.json``,
never inside the memory dir) and is invalidated as a whole when memtui's parser changes
(``code_fingerprint``: the version plus the size and mtime of the parsing modules). It is only a
cache: a missing, unreadable, torn or foreign file is ignored and rewritten; failing to write
it is silent. JSON (orjson) rather than pickle: loading it never runs code.
"""

from __future__ import annotations

import math
import os
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from memtui.core.base.safe_read import read_regular
from memtui.core.places.behaviour import MemoryFormat

# A file modified this recently when it was read is parsed again next time (git's "racy" rule).
RACY_SECONDS = 2
CACHE_NAME = "scan-cache.json"
# A cache bigger than this is not read (~350 bytes per memory: room for a million memories).
MAX_CACHE_BYTES = 512 * 1024 * 1024
# The header scan's own, much smaller cache (description and type only): loading the full one
# (~9 MB at 20,000 memories) would cost a header scan more than the stats it saves.
HEADER_CACHE_NAME = "header-cache.json"
SCHEMA = 2
# The modules whose code decides what a parse yields: a change to any invalidates the cache.
_PARSER_MODULES = (
    "memory/memories",
    "memory/headers",
    "memory/frontmatter",
    "memory/plainyaml",
    "memory/yaml12",
    "memory/lint",
    "base/diagnostics",
    "memory/scancache",
)

StatKey = tuple[int, int, int, int]
_SURROGATE = re.compile("[\ud800-\udfff]")


def stat_key(st: os.stat_result) -> StatKey:
    """``(st_mtime_ns, st_size, st_ino, st_ctime_ns)`` of a ``stat`` result."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def code_fingerprint() -> str:
    """memtui's version and the size + mtime (ns) of each parsing module's source."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        parts = [version("memtui")]
    except PackageNotFoundError:
        parts = ["dev"]
    core = Path(__file__).resolve().parent.parent
    for name in _PARSER_MODULES:
        try:
            st = (core / f"{name}.py").stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:?")
    return ";".join(parts)


def jsonable(value: object, depth: int = 0) -> bool:
    """Whether ``value`` survives a JSON round trip unchanged (str keys, finite floats, 64-bit
    ints, no tuples); frontmatter that does not is simply not cached."""
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


class ScanCache:
    """The cache of one memory dir (see the module docstring). ``path`` ``None``: a disabled
    cache (every lookup misses, ``save`` does nothing).

    Entries are plain JSON lists, opaque here: ``memtui.core.memory.memories`` writes and reads them.
    """

    def __init__(self, path: Path | None, memory_dir: Path) -> None:
        self.path = path
        self.memory_dir = str(memory_dir)
        self._fingerprint = code_fingerprint() if path is not None else ""
        self._entries: dict[str, list[Any]] = {}
        self._seen: set[str] = set()
        self._dirty = False
        self.hits = 0
        self.misses = 0
        if path is not None:
            self._load(path)

    @classmethod
    def for_memory_dir(cls, state_dir: Path | None, memory_dir: Path, name: str = CACHE_NAME, *, fmt: MemoryFormat | None = None) -> ScanCache:
        """The cache of ``memory_dir`` in ``state_dir`` (memtui's state dir): ``name`` is
        ``CACHE_NAME`` (``scan_memories``) or ``HEADER_CACHE_NAME`` (``scan_headers``);
        ``fmt``: the memory format the scans read with (each format has its own cache: what a
        parse finds depends on it). Disabled when ``state_dir`` is ``None`` or lies inside
        the memory dir. Never raises."""
        if fmt is not None and fmt.key != "seed":
            stem, dot, ext = name.rpartition(".")
            name = f"{stem}.{fmt.key}.{ext}" if dot else f"{name}.{fmt.key}"
        if state_dir is None:
            return cls(None, memory_dir)
        from memtui.core.places.statedir import memdir_state

        try:
            folder = memdir_state(state_dir, memory_dir)
        except OSError:  # StateDirInsideMemoryDirError, or a path that cannot be resolved
            return cls(None, memory_dir)
        return cls(folder / name, memory_dir)

    def _load(self, path: Path) -> None:
        try:  # a regular file only (a FIFO planted there must not hang the scan), capped
            data = orjson.loads(read_regular(path, MAX_CACHE_BYTES)[0])
        except (OSError, orjson.JSONDecodeError):
            return
        if (
            isinstance(data, dict)
            and data.get("schema") == SCHEMA
            and data.get("code") == self._fingerprint
            and data.get("memory_dir") == self.memory_dir
            and isinstance(data.get("entries"), dict)
        ):
            self._entries = data["entries"]

    def lookup(self, relpath: str, key: StatKey) -> list[Any] | None:
        """The entry stored for ``relpath`` under exactly ``key``, else ``None``."""
        self._seen.add(relpath)
        entry = self._entries.get(relpath)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == list(key) and isinstance(entry[1], list):
            self.hits += 1
            return entry[1]
        self.misses += 1
        return None

    def lookup_file(self, path: str | os.PathLike[str], relpath: str) -> tuple[list[Any] | None, os.stat_result | None]:
        """``stat`` ``path`` (a regular file, following links) and look its entry up: the entry
        (or ``None``) and the ``stat`` result (``None`` when it cannot be taken or the path is
        not a regular file). Never raises."""
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None, None
        if not stat.S_ISREG(st.st_mode):
            return None, None
        return self.lookup(relpath, stat_key(st)), st

    def store(self, relpath: str, key: StatKey, value: list[Any]) -> None:
        """Remember ``value`` for ``relpath`` at ``key`` — unless the file is racy (modified
        less than ``RACY_SECONDS`` ago, by the wall clock) or the cache is disabled."""
        self._seen.add(relpath)
        if self.path is None:
            return
        if max(key[0], key[3]) > time.time_ns() - RACY_SECONDS * 1_000_000_000:
            self._entries.pop(relpath, None)
            return
        self._entries[relpath] = [list(key), value]
        self._dirty = True

    def save(self, *, complete: bool) -> None:
        """Write the cache if it changed. ``complete``: this scan saw every file, so entries of
        files it did not see (deleted, renamed) are dropped. Never raises."""
        if self.path is None:
            return
        if complete:
            gone = [rel for rel in self._entries if rel not in self._seen]
            for rel in gone:
                del self._entries[rel]
            self._dirty = self._dirty or bool(gone)
        if not self._dirty:
            return
        data = {"schema": SCHEMA, "code": self._fingerprint, "memory_dir": self.memory_dir, "entries": self._entries}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # per writer
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(orjson.dumps(data))
            os.replace(tmp, self.path)
            self._dirty = False
        except (OSError, TypeError):  # a full disk, a read-only state dir: the cache is optional
            try:
                tmp.unlink()
            except OSError:
                pass

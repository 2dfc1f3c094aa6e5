"""The recall-style header scan (docs/behaviour.md §6 "Scan"): the fast path the agent runs on every prompt.

For each memory file it reads only the **first 30 lines**, parses the frontmatter found there
(it must close within them), and keeps ``description`` and the recognised ``type``.
Unreadable files are dropped, as the reference drops them. The result is sorted newest mtime
first; capping it (the reference keeps 200) is the caller's choice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.memories import (
    HEADER_LINES,
    SEED_FORMAT,
    MemoryType,
    StrPath,
    iter_memory_files,
    memory_type_of,
    parse_memory_type,
)
from memtui.core.places.behaviour import MemoryFormat
from memtui.core.base.safe_read import read_head_regular
from memtui.core.memory.catalogdb import CatalogDB, stat_key

_CHUNK = 4096
_HEAD_CAP = 1 << 20


@dataclass(frozen=True, slots=True)
class MemoryHeader:
    """What recall knows of a memory: ``file`` (its path as a string, absolute when the memory
    dir is; a ``Path`` given is kept as its string), ``relpath`` (POSIX, relative to the memory
    dir), ``mtime`` (epoch s), ``description`` (or ``None``), ``type`` (recognised or ``None``).
    ``path`` is ``file`` as a ``Path``, made on access (20,000 ``Path`` objects would cost a
    header scan ~0.1 s)."""

    file: StrPath
    relpath: str
    mtime: float
    description: str | None
    type: MemoryType | None

    def __post_init__(self) -> None:
        if not isinstance(self.file, str):
            object.__setattr__(self, "file", os.fspath(self.file))

    @property
    def path(self) -> Path:
        """``file`` as a ``Path``."""
        return Path(self.file)


def read_head(path: StrPath, max_lines: int = HEADER_LINES) -> tuple[str, float]:
    """The first ``max_lines`` lines of ``path`` (decoded, joined with ``\\n``) and its mtime.

    Reads in 4 KiB chunks and stops as soon as enough lines are in (and at 1 MiB whatever
    happens: a FIFO or ``/dev/zero`` cannot hang or exhaust memory). Raises ``OSError``.
    """
    head, first, _st = _read_head(path, max_lines)
    return head, first.st_mtime


def read_head_stat(path: StrPath, max_lines: int = HEADER_LINES) -> tuple[str, float, os.stat_result]:
    """``read_head`` (the head and the mtime it reports) plus the ``stat`` of the open file
    whose bytes the head holds: a key for exactly what was read. Raises ``OSError``."""
    head, first, st = _read_head(path, max_lines)
    return head, first.st_mtime, st


def _read_head(path: StrPath, max_lines: int) -> tuple[str, os.stat_result, os.stat_result]:
    data, st = read_head_regular(path, _CHUNK)
    first = st
    if data.count(b"\n") < max_lines and len(data) == _CHUNK:
        data, st = read_head_regular(path, _HEAD_CAP)
    lines = data.decode("utf-8", errors="replace").split("\n")
    return "\n".join(lines[:max_lines]), first, st


def _header(path: StrPath, relpath: str, mtime: float, data: dict[str, Any], fmt: MemoryFormat = SEED_FORMAT) -> MemoryHeader:
    desc = data.get("description")
    if fmt.strings_only:
        description = desc if isinstance(desc, str) and desc else None
    else:
        description = None if desc is None or isinstance(desc, (list, dict)) or desc == "" else str(desc)
    return MemoryHeader(path, relpath, mtime, description, memory_type_of(data, fmt))


def read_header(path: StrPath, relpath: str, fmt: MemoryFormat = SEED_FORMAT) -> MemoryHeader | None:
    """The header of one file as the agent of memory format ``fmt`` reads it, or ``None``
    when it cannot be read."""
    try:
        head, mtime = read_head(path)
    except OSError:
        return None
    return _header(path, relpath, mtime, parse_frontmatter(head, strip_bom=fmt.strip_bom).data, fmt)


def _cached_header(path: StrPath, relpath: str, cache: CatalogDB, fmt: MemoryFormat = SEED_FORMAT) -> MemoryHeader | None:
    """The header of one file from ``cache`` when its ``stat`` matches a row (stored by a full
    parse, or by an earlier header scan), else read now and stored as a header-only row."""
    value, st = cache.lookup_file(path, relpath, header=True)
    if value is not None and st is not None:
        try:
            # (the stored mtime must be the file's: a damaged row is read again, not trusted)
            mtime, description, mem_type = value
            if mtime == st.st_mtime and not isinstance(mtime, bool) and (description is None or isinstance(description, str)) and (mem_type is None or isinstance(mem_type, str)):
                return MemoryHeader(path, relpath, st.st_mtime, description, parse_memory_type(mem_type))
        except (TypeError, ValueError):
            pass  # a garbled row: read the file
    header = read_header(path, relpath, fmt)
    if header is not None and st is not None and header.mtime == st.st_mtime:
        cache.store(relpath, stat_key(st), None, [header.mtime, header.description, header.type])
    return header


def scan_headers(memory_dir: Path, *, cache: CatalogDB | None = None, fmt: MemoryFormat = SEED_FORMAT) -> list[MemoryHeader]:
    """Headers of every memory below ``memory_dir``, newest first. A missing dir gives ``[]``.

    ``fmt``: the agent's memory format (where it reads the type); ``cache`` must be that
    format's database.

    ``cache``: the memory dir's ``CatalogDB`` (``CatalogDB.for_memory_dir(state, memory_dir,
    fmt=fmt)``); files whose ``stat`` is unchanged since an earlier scan are not read again.
    Saved after the scan.
    """
    if cache is None:
        headers = [h for path, rel in iter_memory_files(memory_dir) if (h := read_header(path, rel, fmt)) is not None]
    else:
        headers = [h for path, rel in iter_memory_files(memory_dir) if (h := _cached_header(path, rel, cache, fmt)) is not None]
        cache.save(complete=True)
    headers.sort(key=lambda h: -h.mtime)
    return headers

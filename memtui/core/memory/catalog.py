"""The memory catalog: every memory with its age and index status, plus the indexes.

This is what ``memtui ls`` prints and what the Memories pane shows. ``TEAM_DIR`` memories are
covered by ``team/MEMORY.md``; all others by the main ``MEMORY.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtui.core.memory.age import AgeBand, age_band, age_days_at, age_label, stale_caveat
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.memory.index import IndexReport, read_index
from memtui.core.memory.memories import SEED_FORMAT, TEAM_DIR, Memory, MemoryType, scan_memories
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.index import SEED_WARNING
from memtui.core.places.behaviour import IndexWarning, MemoryFormat


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One memory with what is derived from the clock and the index.

    ``diagnostics`` = the file's own plus ``not-indexed`` when no index links it.
    """

    memory: Memory
    age_days: int
    age_label: str
    age_band: AgeBand
    stale_caveat: str | None
    in_index: bool
    diagnostics: tuple[Diagnostic, ...]

    @property
    def relpath(self) -> str:
        """POSIX path relative to the memory dir."""
        return self.memory.relpath

    @property
    def type(self) -> MemoryType | None:
        """The type the agent recognises, or ``None``."""
        return self.memory.type


@dataclass(frozen=True, slots=True)
class Catalog:
    """All memories of a dir (newest first), the main index and the team index (``None``
    when there is no ``team/`` dir), dir-level diagnostics, and the clock used."""

    memory_dir: Path
    entries: tuple[MemoryEntry, ...]
    index: IndexReport
    team_index: IndexReport | None
    diagnostics: tuple[Diagnostic, ...]
    now: datetime
    total: int = -1  # memory files in the dir (``len(entries)`` unless partial)

    @property
    def complete(self) -> bool:
        """Every memory was read (``False`` for the quick first batch of ``newest=N``)."""
        return self.total < 0 or self.total == len(self.entries)


def load_catalog(
    memory_dir: Path,
    now: datetime,
    *,
    newest: int | None = None,
    cache: CatalogDB | None = None,
    fmt: MemoryFormat = SEED_FORMAT,
    warning_style: IndexWarning = SEED_WARNING,
    missing_ok: bool = False,
) -> Catalog:
    """Scan ``memory_dir`` and audit its indexes at time ``now``.

    ``fmt`` / ``warning_style``: how the agent reads a memory and words the index warning
    (``Behaviour.memory_format``, ``Behaviour.instructions.index_warning``); ``cache`` must be the
    cache of that format.

    ``cache``: the memory dir's ``CatalogDB`` (files unchanged since a previous scan are not
    parsed again); ``None`` parses every file.

    ``newest``: only the ``newest`` most recent memories (a UI's first screenful of a large
    dir; the index's ``unindexed`` list then covers only those, dangling links are not
    checked, and with a ``cache`` that keeps the index's summary the index is that summary:
    no entries, see ``IndexReport``). Raises ``MemoryDirError``
    (an ``OSError``) when the dir is missing, unless ``missing_ok`` (then an empty catalog
    whose index does not exist); never for a bad file.
    """
    scan = scan_memories(memory_dir, newest=newest, cache=cache, fmt=fmt, missing_ok=missing_ok)
    main_rel = [m.relpath for m in scan.memories if not m.team]
    team_rel = [m.relpath for m in scan.memories if m.team]
    links = scan.complete  # a quick first batch skips the dangling-link checks
    read = frozenset(m.relpath for m in scan.memories if m.sha256)  # regular files, just read
    # a first batch takes the indexes' summaries kept in the database (no parse of a long index)
    summary = not scan.complete
    index = read_index(memory_dir, main_rel, check_links=links, known_files=read, warning_style=warning_style, cache=cache, summary=summary)
    team_dir = memory_dir / TEAM_DIR
    team_index = (
        read_index(memory_dir, team_rel, index_dir_rel=TEAM_DIR, check_links=links, known_files=read, warning_style=warning_style,
                   cache=cache, summary=summary)
        if team_dir.is_dir()
        else None
    )
    indexed = set(index.indexed) | (set(team_index.indexed) if team_index else set())
    entries: list[MemoryEntry] = []
    now_ts = now.timestamp()
    ages: dict[int, tuple[str, AgeBand, str | None]] = {}  # a few hundred distinct ages, not 20,000
    for mem in scan.memories:
        days = age_days_at(mem.mtime, now_ts)
        if (age := ages.get(days)) is None:
            age = ages[days] = (age_label(days), age_band(days), stale_caveat(days))
        in_index = mem.relpath in indexed
        diags = mem.diagnostics
        if not in_index:
            where = "team/MEMORY.md" if mem.team else "MEMORY.md"
            diags = (*diags, Diagnostic("not-indexed", "info", f"not linked from {where}", mem.file))
        entries.append(MemoryEntry(mem, days, age[0], age[1], age[2], in_index, diags))
    return Catalog(memory_dir, tuple(entries), index, team_index, scan.diagnostics, now, scan.total)


def iso_utc(epoch: float) -> str:
    """Epoch seconds as ISO-8601 UTC with a ``Z`` (millisecond precision, as JavaScript prints)."""
    try:
        dt = datetime.fromtimestamp(epoch, UTC)
    except (OverflowError, OSError, ValueError):  # an mtime outside what Python can represent
        dt = datetime.max.replace(tzinfo=UTC) if epoch > 0 else datetime.min.replace(tzinfo=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def entry_to_json(entry: MemoryEntry) -> dict[str, Any]:
    """The ``memtui ls --json`` shape of one memory."""
    mem = entry.memory
    return {
        "path": mem.relpath,
        "name": mem.name,
        "description": mem.description,
        "type": mem.type,
        "declared_type": mem.declared_type,
        "team": mem.team,
        "mtime": iso_utc(mem.mtime),
        "age_days": entry.age_days,
        "age_label": entry.age_label,
        "stale_caveat": entry.stale_caveat,
        "in_index": entry.in_index,
        "diagnostics": [
            {"code": d.code, "severity": d.severity, "message": d.message, "line": d.line} for d in entry.diagnostics
        ],
    }


def index_to_json(report: IndexReport) -> dict[str, Any]:
    """The ``memtui index --json`` shape. ``skipped``: ``null`` when the whole file was
    audited, else ``{size_bytes, audited_bytes, counted_bytes, note}`` (``IndexSkip``)."""
    trunc = report.truncation
    skip = report.skip
    return {
        "path": str(report.path),
        "exists": report.exists,
        "lines": trunc.lines if trunc else 0,
        "units": trunc.units if trunc else 0,
        "truncated_by": list(trunc.truncated_by) if trunc else [],
        "warning": trunc.warning if trunc else None,
        "loaded_text": trunc.content if trunc else "",
        "dropped_entries": [{"line": e.line, "title": e.title, "target": e.target} for e in report.dropped],
        "dangling": list(report.dangling),
        "unindexed": list(report.unindexed),
        "error": report.error,
        "skipped": None if skip is None else {
            "size_bytes": skip.size, "audited_bytes": skip.audited, "counted_bytes": skip.counted, "note": skip.note(report.path.name),
        },
    }


@dataclass(frozen=True, slots=True)
class CatalogChanges:
    """What differs between two scans of one memory dir: memory files ``added``, ``removed``
    and ``changed`` (other bytes: another ``sha256``), each a tuple of relpaths, sorted."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    def describe(self, most: int = 2) -> str:
        """One line: ``"nothing changed"`` or e.g. ``"1 new (a.md), 2 changed (b.md, c.md)"``
        (at most ``most`` names per part, then ``+N``)."""
        parts = []
        for word, paths in (("new", self.added), ("changed", self.changed), ("gone", self.removed)):
            if paths:
                shown = ", ".join(paths[:most]) + (f" +{len(paths) - most}" if len(paths) > most else "")
                parts.append(f"{len(paths)} {word} ({shown})")
        return ", ".join(parts) if parts else "nothing changed"


def catalog_changes(before: Catalog, after: Catalog) -> CatalogChanges:
    """The memories ``after`` has that ``before`` had not, lost, or holds with other bytes
    (compared by relpath and ``sha256``; both catalogs complete)."""
    old = {e.memory.relpath: e.memory.sha256 for e in before.entries}
    new = {e.memory.relpath: e.memory.sha256 for e in after.entries}
    return CatalogChanges(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(sorted(p for p in new.keys() & old.keys() if new[p] != old[p])),
    )

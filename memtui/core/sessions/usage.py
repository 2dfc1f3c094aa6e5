"""Per-memory usage, from the agent's own transcripts: which memories it recalled, read and
wrote, in how many sessions, when first and last — and which it never used.

``UsageIndex(locations)`` reads every transcript of the project (``projects``: its sessions in
any cwd of the repository, and their sub-agents) through the incremental store
(``usage_store``), then ``report(now, since_days=…)`` counts per memory:

- ``recalled``, ``read``, ``written``: uses of each kind (``uses``), each counted once even when
  a resumed session's transcript repeats it;
- ``sessions``: distinct sessions with a use (a sub-agent's use counts for its session);
- ``first_used`` / ``last_used``: epoch s of the first and the last use.

Every memory file of the memory dir is listed (a memory without a use is *never used* in the
sessions covered); files that were used and no longer exist are listed apart (``missing``).
``MEMORY.md`` and files that are not memories (not ``*.md``) are left out of both.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from memtui.core.places.locations import Locations

from .projects import TranscriptFile, project_transcripts
from .usage_store import UsageStore
from .uses import MemoryUse, TranscriptState, UsesReader

# Transcripts stored per transaction while reading (a cancelled refresh keeps what it read).
SAVE_BATCH = 200
DAY_S = 86_400.0
INDEX_NAME = "MEMORY.md"


def memory_relpaths(memory_dir: Path) -> list[str]:
    """The relpaths ``iter_memory_files`` lists (``*.md`` but ``MEMORY.md``, in its order),
    without building each file's path ([] for a missing dir)."""
    top = os.fspath(memory_dir)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, top)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        out.extend(prefix + f for f in sorted(filenames) if f.endswith(".md") and f != INDEX_NAME)
    return out


def iso(when: float | None) -> str | None:
    """Epoch s as ISO-8601 UTC with milliseconds and ``Z`` (the transcripts' own form)."""
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def is_memory_relpath(relpath: str) -> bool:
    """A path the agent's recall treats as a memory: ``*.md`` (case-sensitive), not
    ``MEMORY.md``."""
    name = relpath.rsplit("/", 1)[-1]
    return name.endswith(".md") and name != INDEX_NAME


@dataclass(frozen=True, slots=True)
class MemoryUsage:
    """One memory's usage (see the module docstring); ``exists``: the file is there now."""

    relpath: str
    recalled: int = 0
    read: int = 0
    written: int = 0
    sessions: int = 0
    first_used: float | None = None
    last_used: float | None = None
    exists: bool = True

    @property
    def used(self) -> bool:
        """Any use in the sessions covered."""
        return bool(self.recalled or self.read or self.written)

    def to_json(self) -> dict[str, Any]:
        """``{path, recalled, read, written, sessions, last_used, first_used}`` (ISO times)."""
        return {
            "path": self.relpath,
            "recalled": self.recalled,
            "read": self.read,
            "written": self.written,
            "sessions": self.sessions,
            "last_used": iso(self.last_used),
            "first_used": iso(self.first_used),
        }


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One session covered: ``session_id``, ``path`` (its own transcript; ``None`` when only
    its sub-agents' are there), ``subagents`` (their count), ``cwd``, ``first_time`` /
    ``last_time`` (epoch s), ``start_tokens`` (input tokens of its first request, as recorded),
    ``recalled_units`` (UTF-16 units of memory recall injected), ``version``."""

    session_id: str
    path: Path | None
    subagents: int
    cwd: str | None
    first_time: float | None
    last_time: float | None
    start_tokens: int | None
    recalled_units: int
    version: str | None


@dataclass(frozen=True, slots=True)
class UsageReport:
    """The usage of one memory dir's memories over the sessions covered.

    ``sessions``: the sessions covered, oldest first; ``memories``: every memory file there now
    (path order); ``missing``: files used that no longer exist; ``transcripts``: transcripts
    read (sessions and sub-agents); ``skipped_lines``: lines of them that were not JSON;
    ``since_days`` / ``now``: the window asked for; ``problems``: sentences (unreadable
    transcripts, a store that could not be used)."""

    memory_dir: Path
    now: float
    since_days: float | None
    sessions: tuple[SessionRecord, ...]
    memories: tuple[MemoryUsage, ...]
    missing: tuple[MemoryUsage, ...]
    transcripts: int = 0
    skipped_lines: int = 0
    problems: tuple[str, ...] = ()
    _by_path: dict[str, MemoryUsage] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_path.update((m.relpath, m) for m in self.memories)
        self._by_path.update((m.relpath, m) for m in self.missing)

    def get(self, relpath: str) -> MemoryUsage | None:
        """The usage of ``relpath`` (``None``: not a memory here and never used)."""
        return self._by_path.get(relpath)

    @property
    def never_used(self) -> tuple[MemoryUsage, ...]:
        """The memories without a use in the sessions covered."""
        return tuple(m for m in self.memories if not m.used)

    @property
    def first_time(self) -> float | None:
        """The first line's time of the sessions covered."""
        return min((s.first_time for s in self.sessions if s.first_time is not None), default=None)

    @property
    def last_time(self) -> float | None:
        """The last line's time of the sessions covered."""
        ends = [t for s in self.sessions if (t := s.last_time if s.last_time is not None else s.first_time) is not None]
        return max(ends, default=None)

    def to_json(self) -> dict[str, Any]:
        """``{"sessions": N, "from": ISO, "to": ISO, "memories": [...], "missing": [...]}`` plus
        ``never_used`` (a count), ``since_days``, ``transcripts`` and ``problems``."""
        return {
            "sessions": len(self.sessions),
            "from": iso(self.first_time),
            "to": iso(self.last_time),
            "memories": [m.to_json() for m in self.memories],
            "missing": [m.to_json() for m in self.missing],
            "never_used": len(self.never_used),
            "since_days": self.since_days,
            "transcripts": self.transcripts,
            "problems": list(self.problems),
        }


class _HasRelpath(Protocol):
    @property
    def relpath(self) -> str: ...


_Listed = TypeVar("_Listed", bound=_HasRelpath)
UseSort = Literal["newest", "most-used", "least-used"]
# The orders a listing by use cycles through: as listed (newest first), most used first, least
# used (never used) first.
USE_SORTS: tuple[UseSort, ...] = ("newest", "most-used", "least-used")


def by_use(entries: Iterable[_Listed], usage: UsageReport | None, *, sort: UseSort = "newest", never_used: bool = False) -> list[_Listed]:
    """``entries`` (anything with a ``relpath``: memory entries) ordered by the agent's use of
    each, as ``usage`` records it: ``sort`` ``"most-used"`` puts the most uses (recalled + read
    + written) first, ties broken by the latest use; ``"least-used"`` the reverse;
    ``"newest"`` keeps the given order. ``never_used`` keeps only the entries without a use.
    Without a report (the transcripts not read yet), ``entries`` as given."""
    listed = list(entries)
    if usage is None:
        return listed
    if never_used:
        listed = [e for e in listed if not ((u := usage.get(e.relpath)) is not None and u.used)]
    if sort == "newest":
        return listed

    def weight(entry: _Listed) -> tuple[int, float]:
        u = usage.get(entry.relpath)
        return (0, 0.0) if u is None else (u.recalled + u.read + u.written, u.last_used or 0.0)

    return sorted(listed, key=weight, reverse=sort == "most-used")


@dataclass(frozen=True, slots=True)
class UseDetail:
    """One use of one memory, for a person: ``use``, ``session_id``, ``transcript`` (the file
    that records it), ``subagent`` (a sub-agent's transcript)."""

    use: MemoryUse
    session_id: str
    transcript: Path
    subagent: bool


@dataclass(frozen=True, slots=True)
class RefreshStats:
    """What a refresh did: transcripts ``read`` from the start, ``resumed`` (grown: read from
    where the last read stopped), ``unchanged`` (not opened), ``forgotten`` (gone),
    ``unreadable``."""

    read: int = 0
    resumed: int = 0
    unchanged: int = 0
    forgotten: int = 0
    unreadable: int = 0


class UsageIndex:
    """The transcripts of one project, read into the usage store (see the module docstring).

    ``transcripts``: how to list them (default: ``project_transcripts(locations)``);
    ``store``: the store (default: the memory dir's in memtui's state dir). Safe to share
    between threads (the store serialises its access)."""

    def __init__(
        self,
        locations: Locations,
        *,
        store: UsageStore | None = None,
        transcripts: Callable[[], list[TranscriptFile]] | None = None,
    ) -> None:
        self.locations = locations
        self.memory_dir = locations.memory_dir
        self.store = store if store is not None else UsageStore.for_memory_dir(locations.state_dir, locations.memory_dir)
        self._list = transcripts if transcripts is not None else (lambda: project_transcripts(locations))
        self._reader = UsesReader(self.memory_dir)
        self._refresh_lock = threading.Lock()
        self.problems: list[str] = [self.store.problem] if self.store.problem else []
        self._cache: tuple[tuple[int, float | None], tuple[Any, Any, Any]] | None = None
        self._owners: tuple[int, dict[str, tuple[str, str | None]]] | None = None

    def refresh(self, cancelled: Callable[[], bool] | None = None) -> RefreshStats:
        """Bring the store up to date with the transcripts on disk; stops early (keeping what
        it read) when ``cancelled()`` turns true. Never raises for a transcript: an unreadable
        one is left out and named in ``problems``."""
        with self._refresh_lock:
            files = self._list()
            known = self.store.known()
            present = {str(f.path) for f in files}
            gone = [p for p in known if p not in present]
            self.store.forget(gone)
            batch: list[tuple[str, str, str | None, str, tuple[int, int, int], TranscriptState]] = []
            read = resumed = unchanged = unreadable = 0
            problems: list[str] = []
            for tf in files:
                key = (tf.size, tf.mtime_ns, tf.inode)
                stored = known.get(str(tf.path))
                if stored == key:
                    unchanged += 1
                    continue
                if cancelled is not None and cancelled():
                    break
                state: TranscriptState | None = None
                if stored is not None and stored[2] == tf.inode and tf.size > stored[0]:
                    state = self.store.load_state(str(tf.path))
                try:
                    was = state is not None
                    state = self._reader.read(tf.path, state)
                except OSError as exc:
                    unreadable += 1
                    problems.append(f"cannot read {tf.path}: {exc.strerror or exc}")
                    continue
                resumed += was
                read += not was
                session = tf.session_id or state.session_id or tf.path.stem
                batch.append((str(tf.path), session, tf.agent_id, str(tf.project_dir), key, state))
                if len(batch) >= SAVE_BATCH:
                    self.store.save(batch)
                    batch = []
            self.store.save(batch)
            self.problems = ([self.store.problem] if self.store.problem else []) + problems
            return RefreshStats(read, resumed, unchanged, len(gone), unreadable)

    def report(self, now: datetime | float, since_days: float | None = None, *, existing: list[str] | None = None) -> UsageReport:
        """The usage of every memory over the sessions in the store (``refresh`` first), those
        active in the last ``since_days`` days when given (``now``: the clock). ``existing``:
        the memory files' relpaths when the caller has them (else the memory dir is listed).
        The counts are kept until the store changes (a second report after a refresh that found
        nothing new costs no query)."""
        now_s = now.timestamp() if isinstance(now, datetime) else float(now)
        since = None if since_days is None else now_s - since_days * DAY_S
        key = (self.store.generation, since)
        if self._cache is not None and self._cache[0] == key:
            sessions, aggregate, transcripts = self._cache[1]
        else:
            transcripts = self.store.transcripts()
            sessions = self._sessions(since, transcripts)
            aggregate = self.store.aggregate(since)
            self._cache = (key, (sessions, aggregate, transcripts))
        rows = {r[0]: r for r in aggregate}
        if existing is None:
            existing = memory_relpaths(self.memory_dir)
        memories = []
        for rel in existing:
            row = rows.pop(rel, None)
            memories.append(MemoryUsage(rel, *row[1:]) if row is not None else MemoryUsage(rel))
        missing = [MemoryUsage(rel, row[1], row[2], row[3], row[4], row[5], row[6], exists=False) for rel, row in sorted(rows.items())
                   if is_memory_relpath(rel) and not os.path.isfile(self.memory_dir / rel)]
        skipped = sum(s.skipped for *_, s in transcripts)
        return UsageReport(self.memory_dir, now_s, since_days, tuple(sessions), tuple(memories), tuple(missing),
                           len(transcripts), skipped, tuple(self.problems))

    def _sessions(self, since: float | None, transcripts: list[tuple[str, str, str | None, str, int, TranscriptState]]) -> list[SessionRecord]:
        by_id: dict[str, dict[str, Any]] = {}
        for path, session, agent, _pdir, mtime_ns, state in transcripts:
            last = state.last_time if state.last_time is not None else state.first_time
            if since is not None and (last if last is not None else mtime_ns / 1e9) < since:
                continue
            rec = by_id.setdefault(session, {"path": None, "subagents": 0, "cwd": None, "first": None, "last": None,
                                             "tokens": None, "units": 0, "version": None})
            if agent is None:
                rec.update(path=Path(path), cwd=state.cwd, tokens=state.start_tokens, version=state.version)
            else:
                rec["subagents"] += 1
                rec["cwd"] = rec["cwd"] or state.cwd
            rec["units"] += state.recalled_units
            if state.first_time is not None:
                rec["first"] = state.first_time if rec["first"] is None else min(rec["first"], state.first_time)
            if last is not None:
                rec["last"] = last if rec["last"] is None else max(rec["last"], last)
        out = [SessionRecord(sid, r["path"], r["subagents"], r["cwd"], r["first"], r["last"], r["tokens"], r["units"], r["version"])
               for sid, r in by_id.items()]
        out.sort(key=lambda s: (s.first_time if s.first_time is not None else float("inf"), s.session_id))
        return out

    def uses_of(self, relpath: str) -> list[UseDetail]:
        """Every use of ``relpath``, oldest first (each once, see ``dedupe``)."""
        if self._owners is None or self._owners[0] != self.store.generation:
            self._owners = (self.store.generation, self.store.owners())
        sessions = self._owners[1]
        seen: set[tuple[str, str]] = set()
        out: list[UseDetail] = []
        for transcript, use in self.store.uses(relpath):
            if (use.key, use.relpath) in seen or transcript not in sessions:
                continue
            seen.add((use.key, use.relpath))
            session, agent = sessions[transcript]
            out.append(UseDetail(use, session, Path(transcript), agent is not None))
        out.sort(key=lambda d: (d.use.time if d.use.time is not None else float("inf"), str(d.transcript), d.use.line))
        return out


def memory_usage(locations: Locations, now: datetime | float, *, since_days: float | None = None,
                 store: UsageStore | None = None) -> UsageReport:
    """``UsageIndex(locations).refresh()`` then ``report(now, since_days)``."""
    index = UsageIndex(locations, store=store)
    index.refresh()
    return index.report(now, since_days)

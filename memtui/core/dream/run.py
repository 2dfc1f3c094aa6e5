"""A dream as a transaction (docs/behaviour.md §8 "Transaction"): gates → lock → plan → apply or discard,
and undo.

::

    session = DreamSession.start(ctx, now, force=False)   # gates (unless force), then the lock
    dp = session.plan("offline", emit=on_event, cancel=cancel_event)   # nothing written
    entry = session.apply(dp, now)      # or session.discard()
    undo_last_dream(ctx, now)           # the memory files and the lock as they were

``plan_dream`` is the dry run (no gates, no lock, nothing written). ``apply`` goes through
``memtui.core.writes.edits.apply_plan``: the conflict check, before-images of every touched file in
memtui's journal (state dir), atomic writes, deletes last, and on any failure every file
restored. Lock rules: success commits it (mtime = acquisition time); failure, a conflict,
cancel or discard roll it back. Each applied dream also leaves a run record
(``<state>/memdirs/<slug>/dream/runs/<journal id>.json``: reasons, findings, the lock before)
so that undo can put the lock back too.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, Self

from memtui.core.base.clock import EPOCH_MAX, EPOCH_MIN
from memtui.core.base.jsontext import json_number, loads_checked
from memtui.core.base.wording import counted
from memtui.core.base.safe_read import read_regular
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.dream.events import DreamCancelled, DreamError, Emit, EventLog
from memtui.core.dream.autodream import AutoDreamStatus, check_autodream
from memtui.core.dream.gates import DreamContext, GateStatus, check_gates, last_scan_at, record_scan
from memtui.core.dream.lock import (
    LockHandle,
    LockLostError,
    acquire_lock,
    lock_path,
    read_lock,
)
from memtui.core.dream.plan import DEFAULT_MAX_DELETIONS, DreamPlan
from memtui.core.places.release import release_of
from memtui.core.writes.edits import EditError, apply_plan, undo
from memtui.core.writes.journal import Journal, JournalEntry

ConsolidatorName = Literal["offline", "claude"]
CONSOLIDATORS: tuple[ConsolidatorName, ...] = ("offline", "claude")


class Consolidator(Protocol):
    """One interface for both consolidators: read ``ctx``, stream events to ``emit``, honour
    ``cancel``, return a plan without writing to the memory dir."""

    def __call__(self, ctx: DreamContext, now: datetime, emit: Emit, cancel: threading.Event | None) -> DreamPlan: ...


class DreamBlocked(RuntimeError):
    """A gate is closed; ``status`` says which (``status.blocking``) and why: a ``GateStatus``
    (the seed's gates) or, for a flavor with a CLI release, its ``AutoDreamStatus``. The
    message names no way round the gates: each interface names its own (a flag, a key)."""

    def __init__(self, status: GateStatus | AutoDreamStatus) -> None:
        if isinstance(status, AutoDreamStatus):
            why = status.verdict
        else:
            why = status.reasons[0] if status.reasons else str(status.blocking)
        super().__init__(f"the dream would not run: {why.rstrip().rstrip('.')}. Nothing was changed.")
        self.status = status


def make_consolidator(name: ConsolidatorName | Consolidator, *, max_deletions: int = DEFAULT_MAX_DELETIONS, **claude_options: Any) -> Consolidator:
    """The consolidator called ``name`` (``"offline"`` or ``"claude"``; a callable is returned
    as is). ``claude_options`` go to ``ClaudeConsolidator`` (``client``, ``model``,
    ``max_turns``). Raises ``ValueError`` for an unknown name."""
    if callable(name):
        return name
    if name == "offline":
        from memtui.core.dream.offline import consolidate_offline

        def offline(ctx: DreamContext, now: datetime, emit: Emit, cancel: threading.Event | None) -> DreamPlan:
            return consolidate_offline(ctx, now, emit, cancel, max_deletions=max_deletions)

        return offline
    if name == "claude":
        from memtui.core.dream.claude import ClaudeConsolidator

        return ClaudeConsolidator(max_deletions=max_deletions, **claude_options)
    raise ValueError(f"unknown consolidator {name!r} (offline or claude)")


def _check_cap(dp: DreamPlan, max_deletions: int) -> None:
    if dp.deletions > max_deletions:
        raise DreamError(f"the plan deletes {counted(dp.deletions, 'file')}; a dream may delete at most {max_deletions}")


def plan_dream(
    ctx: DreamContext,
    now: datetime,
    consolidator: ConsolidatorName | Consolidator = "offline",
    *,
    emit: Emit | None = None,
    cancel: threading.Event | None = None,
    max_deletions: int = DEFAULT_MAX_DELETIONS,
    **claude_options: Any,
) -> DreamPlan:
    """A dry run: the plan, without gates, lock or any write to the memory dir. Raises
    ``DreamCancelled``, ``DreamError``, ``MemoryDirError``."""
    dp = make_consolidator(consolidator, max_deletions=max_deletions, **claude_options)(ctx, now, EventLog(emit), cancel)
    _check_cap(dp, max_deletions)
    return dp


def _runs_dir(ctx: DreamContext) -> Path:
    return ctx.dream_state_dir / "runs"


@dataclass(frozen=True, slots=True)
class LockSnapshot:
    """The lock file before a dream took it: ``exists``, ``body``, ``mtime`` (epoch s)."""

    exists: bool
    body: str
    mtime: float | None


class DreamSession:
    """One gated, locked dream. Use ``start``; then ``plan``, then ``apply`` or ``discard``.
    As a context manager, leaving without ``apply``/``discard`` rolls the lock back."""

    def __init__(self, ctx: DreamContext, lock: LockHandle, before: LockSnapshot, status: GateStatus | None, max_deletions: int) -> None:
        self.ctx = ctx
        self.lock = lock
        self.lock_before = before
        self.status = status
        self.max_deletions = max_deletions
        self.done = False

    @classmethod
    def start(cls, ctx: DreamContext, now: datetime, *, force: bool = False, max_deletions: int = DEFAULT_MAX_DELETIONS) -> DreamSession:
        """Check the gates (skipped when ``force``; the sessions scan is recorded for the
        10-minute throttle) — the flavor's CLI release's, in its order, when it has one — and
        take the lock. Raises ``DreamBlocked``, ``LockHeldError``,
        ``LockLostError``, ``OSError``."""
        status = None
        release = release_of(ctx.flavor)
        if not force and release is not None:
            # the flavor's CLI release decides, as its own dream would at the end of a turn;
            # memtui is one more process: its last scan (kept in its state dir) is the throttle's
            auto = check_autodream(ctx, now, release, last_scan_at=last_scan_at(ctx))
            if auto.gate("time").ok and auto.gate("throttle").ok:
                record_scan(ctx, now)
            if not auto.would_fire:
                raise DreamBlocked(auto)
        elif not force:
            status = check_gates(ctx, now, record=True)
            if not status.would_run:
                raise DreamBlocked(status)
        info = read_lock(ctx.memory_dir)
        before = LockSnapshot(info.exists, info.body, info.mtime)
        return cls(ctx, acquire_lock(ctx.memory_dir, now), before, status, max_deletions)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.done:
            self.discard()

    def plan(
        self,
        consolidator: ConsolidatorName | Consolidator = "offline",
        now: datetime | None = None,
        *,
        emit: Emit | None = None,
        cancel: threading.Event | None = None,
        **claude_options: Any,
    ) -> DreamPlan:
        """Run the consolidator (events to ``emit``, ``cancel`` honoured). On cancel or any
        error the lock is rolled back and the error re-raised (``DreamCancelled``, …)."""
        try:
            dp = make_consolidator(consolidator, max_deletions=self.max_deletions, **claude_options)(
                self.ctx, now or datetime.fromtimestamp(self.lock.acquired_at).astimezone(), EventLog(emit), cancel
            )
            _check_cap(dp, self.max_deletions)
            return dp
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Drop the plan: the lock goes back to its prior mtime (deleted when there was none)."""
        self.done = True
        self.lock.rollback()

    def apply(self, dp: DreamPlan, now: datetime) -> JournalEntry | None:
        """Apply the plan as one journal entry (``action="dream"``) and commit the lock.
        An empty plan writes nothing and still counts as a consolidation (``None``).
        Raises ``ConflictError`` / ``ApplyError`` (nothing changed; lock rolled back),
        ``LockLostError`` (another process reclaimed the lock meanwhile; nothing written)."""
        if self.done:
            raise DreamError("this dream was already applied or discarded")
        if read_lock(self.ctx.memory_dir).body != self.lock.body:
            self.done = True
            raise LockLostError("another process took the consolidation lock while the plan was open; nothing was written")
        try:
            _check_cap(dp, self.max_deletions)
            entry = None
            if not dp.empty:
                # the lock as it was goes into the journal entry too: a crash before the run
                # record below is written still lets undo put the lock back
                lock = {
                    "lock_before": {"exists": self.lock_before.exists, "body": self.lock_before.body, "mtime": self.lock_before.mtime},
                    "lock_acquired_at": self.lock.acquired_at,
                }
                entry = apply_plan(self.ctx.memory_dir, dp.plan, Journal(self.ctx.state_dir, self.ctx.memory_dir), now, meta={"dream": lock})
        except BaseException:
            self.discard()
            raise
        self.done = True
        self.lock.commit()
        if entry is not None:
            self._record(entry, dp)
        return entry

    def _record(self, entry: JournalEntry, dp: DreamPlan) -> None:
        record = {
            "entry": entry.id,
            "time": entry.time,
            "consolidator": dp.consolidator,
            "changes": [{"path": c.relpath, "action": c.kind, "reason": r} for c, r in dp.items()],
            "findings": [{"code": f.code, "path": f.path, "line": f.line, "message": f.message} for f in dp.findings],
            "lock_before": {"exists": self.lock_before.exists, "body": self.lock_before.body, "mtime": self.lock_before.mtime},
            "lock_acquired_at": self.lock.acquired_at,
        }
        try:
            atomic_write_bytes(_runs_dir(self.ctx) / f"{entry.id}.json", json.dumps(record, ensure_ascii=False, indent=1).encode("utf-8"))
        except OSError:
            pass  # the journal entry is the record that matters; undo then leaves the lock as is


def run_dream(
    ctx: DreamContext,
    now: datetime,
    consolidator: ConsolidatorName | Consolidator = "offline",
    *,
    force: bool = False,
    emit: Emit | None = None,
    cancel: threading.Event | None = None,
    max_deletions: int = DEFAULT_MAX_DELETIONS,
    **claude_options: Any,
) -> tuple[DreamPlan, JournalEntry | None]:
    """Gates, lock, plan, apply — ``memtui dream apply``. Returns the plan and the journal
    entry (``None`` when there was nothing to change). Raises what ``DreamSession`` raises."""
    with DreamSession.start(ctx, now, force=force, max_deletions=max_deletions) as session:
        dp = session.plan(consolidator, now, emit=emit, cancel=cancel, **claude_options)
        return dp, session.apply(dp, now)


# Journal actions undone as a dream: an applied dream, and a reset of the consolidation lock.
DREAM_ACTIONS = ("dream", "dream-lock")


def dream_entries(ctx: DreamContext) -> list[JournalEntry]:
    """Applied dreams (and lock resets) not undone yet, oldest first."""
    entries = Journal(ctx.state_dir, ctx.memory_dir).entries()
    undone = {e.undoes for e in entries if e.status == "applied" and e.undoes}
    return [e for e in entries if e.action in DREAM_ACTIONS and e.status == "applied" and e.id not in undone]


def undo_last_dream(ctx: DreamContext, now: datetime) -> JournalEntry:
    """Undo the last applied dream: every file back byte for byte with its mtime (deleted
    files return from the journal), and the lock back to how it was before that dream when
    no consolidation took it since. Raises ``EditError`` (no dream to undo), ``ConflictError``
    (a file changed since the dream: nothing written)."""
    entries = dream_entries(ctx)
    if not entries:
        raise EditError("no applied dream to undo")
    target = entries[-1]
    entry = undo(ctx.memory_dir, Journal(ctx.state_dir, ctx.memory_dir), now, target.id)
    _restore_lock(ctx, target)
    return entry


def _restore_lock(ctx: DreamContext, target: JournalEntry) -> None:
    try:
        record = loads_checked(read_regular(_runs_dir(ctx) / f"{target.id}.json", 1 << 20)[0])
    except (OSError, ValueError):
        record = target.meta.get("dream") if isinstance(target.meta, dict) else None
    if not isinstance(record, dict):
        return
    # a record edited by hand (a list for the lock, a string for a time) restores nothing
    before, acquired = record.get("lock_before") or {}, json_number(record.get("lock_acquired_at"), EPOCH_MIN, EPOCH_MAX)
    if not isinstance(before, dict):
        return
    info = read_lock(ctx.memory_dir)
    if not info.exists or info.body != "" or info.mtime is None or acquired is None or abs(info.mtime - acquired) > 1e-3:
        return  # another consolidation (or a run in progress) since: leave the lock alone
    path = lock_path(ctx.memory_dir)
    if not before.get("exists"):
        path.unlink(missing_ok=True)
        return
    body, mtime = before.get("body", ""), json_number(before.get("mtime"), EPOCH_MIN, EPOCH_MAX)
    if mtime is None:
        return  # a lock that was there at an unusable time: a body alone would date it now, so leave it
    atomic_write_bytes(path, (body if isinstance(body, str) else "").encode("utf-8", "replace"))
    os.utime(path, (mtime, mtime))


__all__ = [
    "CONSOLIDATORS",
    "Consolidator",
    "DreamBlocked",
    "DreamCancelled",
    "DreamError",
    "DreamSession",
    "dream_entries",
    "make_consolidator",
    "plan_dream",
    "run_dream",
    "undo_last_dream",
]

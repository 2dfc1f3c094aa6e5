"""Reset the consolidation lock after a dream that left no record (the failed-dream trap of
:mod:`memtui.core.dream.autodream`), as one undoable change.

The CLI's own rollback, when its dream throws, is: no prior consolidation → delete the lock;
else empty it and set its mtime back to the prior one. A dream the API refused does not throw,
so the CLI never rolls it back; memtui does the same rollback on request, to the newest dream
the transcripts record before the stamp — or, with none, to an empty lock dated the epoch
(``lastConsolidatedAt`` 0: what the CLI reads for "never"; a deletion would put the lock in
memtui's trash). It goes through the journal like any change: ``memtui undo`` puts the lock
back byte for byte with its mtime.
"""

from __future__ import annotations

from datetime import datetime

from memtui.core.dream.autodream import last_recorded_dream
from memtui.core.dream.gates import DreamContext
from memtui.core.dream.lock import LOCK_NAME, read_lock
from memtui.core.memory.catalog import iso_utc
from memtui.core.sessions.background import SessionActivity, project_activity
from memtui.core.writes.edits import EditError, FileChange, Plan, apply_plan
from memtui.core.writes.journal import Journal, JournalEntry, read_or_none

LOCK_RESET_ACTION = "dream-lock"


def plan_lock_reset(ctx: DreamContext, activities: list[SessionActivity] | None = None) -> Plan:
    """The change that resets the lock (see the module docstring). Raises ``EditError`` when
    there is no lock, or it is already at the target."""
    info = read_lock(ctx.memory_dir)
    if not info.exists or info.mtime is None:
        raise EditError("there is no consolidation lock to reset")
    acts = activities if activities is not None else project_activity(ctx.sessions_dir)
    prior = last_recorded_dream(acts, before=info.mtime)
    target = prior if prior is not None else 0.0
    current = read_or_none(ctx.memory_dir / LOCK_NAME)
    if current == b"" and abs(info.mtime - target) < 1e-3:
        raise EditError("the lock is already reset")
    to = f"the dream of {iso_utc(prior)[:16].replace('T', ' ')} UTC" if prior is not None else "never consolidated"
    title = f"Reset the consolidation lock to {to} (was {iso_utc(info.mtime)[:16].replace('T', ' ')} UTC, PID {info.holder_pid})"
    return Plan(title, (FileChange(LOCK_NAME, current, b"", target),), action=LOCK_RESET_ACTION)


def reset_lock(ctx: DreamContext, now: datetime, activities: list[SessionActivity] | None = None) -> JournalEntry:
    """Apply :func:`plan_lock_reset` through the journal. Raises ``EditError``,
    ``ConflictError`` (the lock changed meanwhile), ``ApplyError``."""
    return apply_plan(ctx.memory_dir, plan_lock_reset(ctx, activities), Journal(ctx.state_dir, ctx.memory_dir), now)

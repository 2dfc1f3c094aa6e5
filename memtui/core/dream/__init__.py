"""Dream: gated, locked, four-phase consolidation of the memory dir as a transaction with undo
(docs/behaviour.md §8). No UI library is imported here; nothing prints.

- ``check_gates(ctx, now)`` → ``GateStatus`` (``status_to_json`` for ``memtui dream status``)
- ``plan_dream(ctx, now, "offline"|"claude", emit=..., cancel=...)`` → ``DreamPlan`` (dry run)
- ``DreamSession.start(ctx, now, force=...)`` → ``.plan(...)`` → ``.apply(plan, now)`` /
  ``.discard()``; ``run_dream`` does all three
- ``undo_last_dream(ctx, now)``; ``dream_entries(ctx)``
- events (``PhaseStarted``, ``PhaseFinished``, ``FileRead``, ``Finding``, ``ProposedChange``,
  ``Progress``, ``LogLine``) go to ``emit`` as they happen; ``stream_dream`` yields them.
"""

from __future__ import annotations

from memtui.core.dream.events import (
    PHASES,
    DreamCancelled,
    DreamEvent,
    Emit,
    FileRead,
    Finding,
    LogLine,
    Phase,
    PhaseFinished,
    PhaseStarted,
    Progress,
    ProposedChange,
    event_to_json,
)
from memtui.core.dream.gates import (
    SCAN_INTERVAL_S,
    DreamContext,
    GateStatus,
    check_gates,
    read_dream_settings,
    status_to_json,
)
from memtui.core.dream.lock import (
    STALE_AFTER_S,
    LockError,
    LockHandle,
    LockHeldError,
    LockInfo,
    LockLostError,
    acquire_lock,
    read_lock,
)
from memtui.core.dream.plan import DEFAULT_MAX_DELETIONS, DreamPlan, plan_to_json
from memtui.core.dream.run import (
    CONSOLIDATORS,
    Consolidator,
    DreamBlocked,
    DreamError,
    DreamSession,
    dream_entries,
    make_consolidator,
    plan_dream,
    run_dream,
    undo_last_dream,
)
from memtui.core.dream.stream import DreamDone, stream_dream

__all__ = [
    "SCAN_INTERVAL_S",
    "STALE_AFTER_S",
    "CONSOLIDATORS",
    "DEFAULT_MAX_DELETIONS",
    "PHASES",
    "Consolidator",
    "DreamBlocked",
    "DreamCancelled",
    "DreamContext",
    "DreamDone",
    "DreamError",
    "DreamEvent",
    "DreamPlan",
    "DreamSession",
    "Emit",
    "FileRead",
    "Finding",
    "GateStatus",
    "LockError",
    "LockHandle",
    "LockHeldError",
    "LockInfo",
    "LockLostError",
    "LogLine",
    "Phase",
    "PhaseFinished",
    "PhaseStarted",
    "Progress",
    "ProposedChange",
    "acquire_lock",
    "check_gates",
    "dream_entries",
    "event_to_json",
    "make_consolidator",
    "plan_dream",
    "plan_to_json",
    "read_dream_settings",
    "read_lock",
    "run_dream",
    "status_to_json",
    "stream_dream",
    "undo_last_dream",
]

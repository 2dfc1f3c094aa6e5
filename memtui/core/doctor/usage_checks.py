"""Memories the agent has not used for a while, from its own transcripts: candidates for review.

A memory is flagged ``unused`` when the project has at least ``UNUSED_SESSIONS`` sessions on
record, the memory is older than the start of the last ``UNUSED_SESSIONS`` of them, and none of
them recalled, read or wrote it (``memtui.core.sessions.usage``). The finding is information, a
question for a person — is it still true, still useful? — never a deletion.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from memtui.core.base.wording import counted
from memtui.core.memory.memories import Memory
from memtui.core.sessions.usage import UsageReport

from .model import Finding, finding

# memtui's choice: how many of the latest sessions a memory must have gone unused in (and how
# many sessions must be on record before anything is said at all).
UNUSED_SESSIONS = 20


def unused_findings(usage: UsageReport, memories: Sequence[Memory], *, last: int = UNUSED_SESSIONS) -> list[Finding]:
    """One ``unused`` finding per memory of ``memories`` that none of the last ``last``
    sessions of ``usage`` used (see the module docstring); ``[]`` with fewer sessions."""
    dated = [s for s in usage.sessions if s.first_time is not None]
    if len(dated) < last:
        return []
    window = dated[-last:]
    since = min(s.first_time for s in window if s.first_time is not None)
    day = datetime.fromtimestamp(since, UTC).date().isoformat()
    out: list[Finding] = []
    for mem in memories:
        if mem.mtime >= since:
            continue  # newer than the window: too early to say
        use = usage.get(mem.relpath)
        if use is not None and use.last_used is not None and use.last_used >= since:
            continue
        last_use = "never used in the sessions on record" if use is None or use.last_used is None else \
            f"last used {datetime.fromtimestamp(use.last_used, UTC).date().isoformat()}"
        out.append(finding(
            "unused", mem.relpath, None,
            f"not recalled, read or written in the last {counted(last, 'session')} (since {day}; {last_use}): "
            "a candidate for review — is it still true and useful? Nothing is deleted.",
            sessions=last, since=day,
        ))
    return out


def project_usage(locations: object, now: datetime) -> UsageReport | None:
    """The usage of ``locations``' memories from its transcripts (``None`` when it cannot be
    read: the finding is then left out)."""
    from memtui.core.places.locations import Locations
    from memtui.core.sessions.usage import UsageIndex

    if not isinstance(locations, Locations):
        return None
    try:
        index = UsageIndex(locations)
        index.refresh()
        return index.report(now)
    except OSError:
        return None
